"""The edit profile: `host/requestEditPlan` (plans, never writes) and `host/applyProposal` (the only writer)."""
