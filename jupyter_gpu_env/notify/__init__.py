"""Word when something ends: a job, a sweep or a scheduled run. ``settings`` (the user's choices, kept in
the state folder), ``message`` (the pure builders of the e-mail and the webhook's JSON), ``email`` (the
site's SMTP server), ``webhook`` (a JSON POST), ``notifier`` (``Notifier``: told of every end, decides,
delivers in the background with retries)."""
