"""Right-size advice: the smallest GPU or MIG slice that fits what a notebook's runs measured."""
