"""E-mail through the site's SMTP server: smtplib on a worker thread (never on the event loop), STARTTLS
when configured, a login when a user is configured, and a timeout on every step."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid


class DeliveryFailed(Exception):
    """A message was not delivered; the words say why (no secret in them)."""


@dataclass(frozen=True)
class SmtpSettings:
    """``c.GpuEnvApp.smtp_*``: the server, how to talk to it, and who the mail is from."""

    host: str
    port: int = 587
    starttls: bool = True
    sender: str = ""
    username: str = ""
    password: str = ""
    timeout: float = 20.0

    @property
    def enabled(self) -> bool:
        return bool(self.host)


def build(smtp: SmtpSettings, to: str, subject: str, text: str) -> EmailMessage:
    """The message: plain text, UTF-8, with a date and a message id."""
    msg = EmailMessage()
    msg["From"] = smtp.sender
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=True)
    domain = smtp.sender.rpartition("@")[2] or None
    msg["Message-ID"] = make_msgid(domain=domain)
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to it
    msg.set_content(text)
    return msg


async def send(smtp: SmtpSettings, to: str, subject: str, text: str) -> None:
    """Send one e-mail, or raise :class:`DeliveryFailed` saying why."""
    if not smtp.enabled:
        raise DeliveryFailed("e-mail is off on this server (c.GpuEnvApp.smtp_host is not set)")
    msg = build(smtp, to, subject, text)
    await asyncio.to_thread(_send, smtp, msg)


def _send(smtp: SmtpSettings, msg: EmailMessage) -> None:
    where = f"{smtp.host}:{smtp.port}"
    try:
        with smtplib.SMTP(smtp.host, smtp.port, timeout=smtp.timeout) as client:
            if smtp.starttls:
                client.starttls(context=ssl.create_default_context())
            if smtp.username:
                client.login(smtp.username, smtp.password)
            refused = client.send_message(msg)
    except smtplib.SMTPRecipientsRefused as e:
        raise DeliveryFailed(f"the SMTP server {where} refused the address {msg['To']}") from e
    except smtplib.SMTPAuthenticationError as e:
        raise DeliveryFailed(f"the SMTP server {where} refused the login of {smtp.username!r}") from e
    except smtplib.SMTPNotSupportedError as e:
        raise DeliveryFailed(f"the SMTP server {where} does not offer {e}") from e
    except smtplib.SMTPResponseException as e:
        said = e.smtp_error.decode("utf-8", "replace") if isinstance(e.smtp_error, bytes) else e.smtp_error
        raise DeliveryFailed(f"the SMTP server {where} answered {e.smtp_code} {said}") from e
    except (OSError, smtplib.SMTPException) as e:  # refused, unreachable, timed out, TLS
        raise DeliveryFailed(f"the SMTP server {where} could not be reached: {e or type(e).__name__}") from e
    if refused:
        raise DeliveryFailed(f"the SMTP server {where} refused the address {msg['To']}")
