"""Models of what goes on by itself once set up: schedules, and the word sent when something ends."""
