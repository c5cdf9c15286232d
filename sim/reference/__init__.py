"""The reference simulator: scalar, exact, readable; the oracle for every other engine."""
