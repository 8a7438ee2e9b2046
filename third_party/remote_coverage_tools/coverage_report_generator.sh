#!/bin/sh
echo "coverage is not supported in Strata's offline build" >&2
exit 1
