"""Changes to an environment's packages: the plan shown first, the change applied to a transaction's
copy, and the history each environment keeps of them."""
