"""`host/evaluateChangeset`: provider runs, Assessment checks and the one decision algorithm."""
