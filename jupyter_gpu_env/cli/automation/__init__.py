"""Commands for what goes on by itself once set up: schedules."""
