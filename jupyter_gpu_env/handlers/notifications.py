"""`notifications`, `notifications/test`: where word goes when a job, a sweep or a scheduled run ends."""

from __future__ import annotations

from ..models.automation.notifications import NotificationSettings, NotificationSettingsView, NotificationTest
from .base import GpuEnvHandler, operation


class NotificationsHandler(GpuEnvHandler):
    @operation(
        "Your notification choices, and whether this server sends e-mail",
        response=NotificationSettingsView,
        description="Word goes by e-mail (through the site's SMTP server, `c.GpuEnvApp.smtp_host`; "
        "`email_available` says whether it is set) and to a webhook (a JSON POST, Slack- and "
        "Mattermost-compatible) when a job, a sweep (once, when all its runs have ended) or a scheduled "
        "run ends: every end (`all`) or failures only (`failed`). A job's own `notify` is over these.",
    )
    async def get(self) -> NotificationSettingsView:
        return await self.services.notifications.get()

    @operation(
        "Set your notification choices",
        request=NotificationSettings,
        response=NotificationSettingsView,
        errors=(400,),
        description="The whole choice: a field left out is its default (no e-mail, no webhook, failures "
        "only). A malformed address, or a URL that is not http(s), is a 400 that says so.",
    )
    async def put(self, body: NotificationSettings) -> NotificationSettingsView:
        return await self.services.notifications.put(body)


class NotificationTestHandler(GpuEnvHandler):
    @operation(
        "Send a test message to your e-mail address and webhook",
        response=NotificationTest,
        description="Each destination set is tried once, and the answer says what happened to each "
        "(delivered, or why not: e-mail off on this server, the SMTP server's or the webhook's answer). "
        "A webhook is shown by its scheme and host only: its path is often its secret.",
    )
    async def post(self) -> NotificationTest:
        return await self.services.notifications.send_test()
