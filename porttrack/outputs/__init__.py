"""The outputs: the sync and deferral reports, check (the CI gate) and the formats its findings are
written in. Reports of a written queue read it as it is (written); our own report lines are marked
(marks) so that re-importing them changes nothing."""
