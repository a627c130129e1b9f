"""The evidence stage: what audit and check read besides the probe. Code or not (codemask), provenance
headers, roadmap rows (owners), deferral records, what a change's hunks say, refactors with no
behaviour, pre-pin gaps, and the spellings a port gives an upstream name (naming)."""
