"""Notifications when a job, a sweep or a scheduled run ends: the user's choices, a job's own override,
and what a test message did."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..common import ApiModel
from ..fields import patterned

# Control characters and every Unicode space, spelled out: `\s` means other things to Python and to
# JSON Schema's ECMA-262, and a pattern must refuse the same strings in both.
_BLANK = r"\x00-\x20\x7f-\x9f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# One address, as people write them: something@domain.tld, no spaces, no display name.
EMAIL_PATTERN = (
    r"^[^@"
    + _BLANK
    + r"<>(),;:\"\[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$"
)
# An http(s) URL with a host, on one line without spaces.
WEBHOOK_PATTERN = r"^[hH][tT][tT][pP][sS]?://[^/?#@" + _BLANK + r"]+(?:[/?#][^" + _BLANK + r"]*)?$"
MAX_EMAIL = 254
MAX_URL = 2048

Email = Annotated[
    str, patterned(EMAIL_PATTERN, "email", hint="give one address, as name@example.org", max_length=MAX_EMAIL)
]
WebhookUrl = Annotated[
    str,
    patterned(
        WEBHOOK_PATTERN,
        "webhook_url",
        hint="it must be an http:// or https:// URL, as a Slack or Mattermost incoming webhook's",
        max_length=MAX_URL,
    ),
]
NotifyOn = Literal["failed", "all"]


class NotificationSettings(ApiModel):
    """`PUT notifications`: where word goes when a job, a sweep or a scheduled run ends, and when."""

    email: Email | None = Field(default=None, description="An e-mail address; null: no e-mail.")
    webhook_url: WebhookUrl | None = Field(
        default=None,
        description="An http(s) URL that gets a JSON POST (Slack- and Mattermost-compatible); null: none.",
    )
    on: NotifyOn = Field(
        default="failed", description="`failed`: only when something fails; `all`: every end."
    )


class NotificationSettingsView(NotificationSettings):
    """`GET notifications`: the user's choices, and what this server can send."""

    email_available: bool = Field(
        description="Whether this server sends e-mail (`c.GpuEnvApp.smtp_host` is set); while false, an "
        "address is kept but nothing is sent to it."
    )


class JobNotify(ApiModel):
    """A job's own notification choices, over the user's (`notify` in `POST jobs`)."""

    on: Literal["failed", "all", "never"] | None = Field(
        default=None, description="`never`: nothing for this job; left out, the user's choice."
    )
    email: Email | None = Field(default=None, description="Instead of the user's address.")
    webhook_url: WebhookUrl | None = Field(default=None, description="Instead of the user's webhook.")


class Delivery(ApiModel):
    """What happened to one message sent to one destination."""

    channel: Literal["email", "webhook"]
    destination: str = Field(description="The address or the webhook's URL (its path left out).")
    delivered: bool
    message: str = Field(description="What happened, in words.")


class NotificationTest(ApiModel):
    """`POST notifications/test`: a test message sent to every configured destination."""

    deliveries: list[Delivery] = Field(
        description="One per destination; empty when none is configured (or e-mail is off here and no "
        "webhook is set)."
    )
    message: str = Field(description="A summary in words.")
