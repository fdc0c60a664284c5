"""`python3 -m defences`: the catalogue of units and of defences decided
elsewhere, as JSON (defences.catalogue()); read by hacks.test.cpp."""

import json

from . import catalogue

print(json.dumps(catalogue(), indent=1, sort_keys=True))
