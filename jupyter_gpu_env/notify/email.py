"""E-mail through the site's SMTP server: smtplib on a delivery thread (never on the event loop, never on
the server's shared threads), in the SMTP server's slot (:mod:`.lanes`), STARTTLS when configured, a
login when a user is configured, and a timeout on every step and on the whole."""

from __future__ import annotations

import asyncio
import contextlib
import re
import smtplib
import socket
import ssl
import threading
from dataclasses import dataclass
from email.errors import MessageError
from email.header import Header
from email.message import EmailMessage
from email.policy import Policy
from email.utils import formatdate, make_msgid

from .lanes import Lanes

# What ends a line for Python's email package (str.splitlines: CR, LF, VT, FF, FS, GS, RS, NEL, U+2028,
# U+2029), and every other control character: none of them belongs in a one-line header.
_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


class DeliveryFailed(Exception):
    """A message was not delivered; the words say why (no secret in them). ``permanent``: trying again
    would fail the same way."""

    def __init__(self, words: str, *, permanent: bool = False) -> None:
        super().__init__(words)
        self.permanent = permanent


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


def one_line(text: str) -> str:
    """``text`` as one header line: each run of line breaks (of any kind) and control characters one space.
    A job's name may hold U+2028 or U+0085 (the API takes them), or anything at all in a record kept from
    before its checks; its message is sent all the same."""
    return _NOT_ONE_LINE.sub(" ", text)


@dataclass(frozen=True)
class _EncodedWhole:
    """A header written as encoded-words from its first character to its last (RFC 2047), for text that
    holds ``=?``: the email package writes such text as it is, and every mail reader would then decode a
    name such as ``=?utf-8?q?x?=`` into something else."""

    name: str
    text: str

    def fold(self, *, policy: Policy) -> str:
        words = Header(self.text, "utf-8", header_name=self.name).encode(linesep=policy.linesep)
        return f"{self.name}: {words}{policy.linesep}"

    def __str__(self) -> str:
        return self.text


def build(smtp: SmtpSettings, to: str, subject: str, text: str) -> EmailMessage:
    """The message: plain text, UTF-8, with a date and a message id; the subject on one line, encoded
    where it must be. Raises a permanent :class:`DeliveryFailed` where no message can be made (an address
    the site or the user wrote that no header can hold)."""
    subject = one_line(subject).strip()
    msg = EmailMessage()
    try:
        msg["From"] = smtp.sender
        msg["To"] = to
        msg["Subject"] = _EncodedWhole("Subject", subject) if "=?" in subject else subject
        msg["Date"] = formatdate(localtime=True)
        domain = smtp.sender.rpartition("@")[2] or None
        msg["Message-ID"] = make_msgid(domain=domain)
        msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to it
        msg.set_content(text)
    except (ValueError, TypeError, MessageError) as e:
        raise DeliveryFailed(f"the message to {to} could not be made: {e}", permanent=True) from e
    return msg


async def send(smtp: SmtpSettings, to: str, subject: str, text: str, lanes: Lanes) -> None:
    """Send one e-mail in the SMTP server's slot, within ``smtp.timeout`` seconds in all, or raise
    :class:`DeliveryFailed` saying why."""
    if not smtp.enabled:
        raise DeliveryFailed("e-mail is off on this server (c.GpuEnvApp.smtp_host is not set)")
    msg = build(smtp, to, subject, text)
    session = _Session(smtp)
    async with lanes.slot(f"smtp://{smtp.host}:{smtp.port}"):
        sending = asyncio.ensure_future(lanes.in_thread(lambda: session.send(msg)))
        try:
            # smtplib's timeout bounds each read and write; a server that answers a line at a time
            # forever is given up here, all steps together.
            await asyncio.wait_for(asyncio.shield(sending), smtp.timeout)
        except TimeoutError:
            session.cut()
            with contextlib.suppress(Exception):
                await sending  # at once: its socket is shut; the slot is free when its thread is
            where, seconds = f"{smtp.host}:{smtp.port}", f"{smtp.timeout:g}"
            raise DeliveryFailed(f"the SMTP server {where} did not finish within {seconds} s") from None
        except asyncio.CancelledError:
            session.cut()  # the notifier stops: its thread ends at once, without us
            raise


class _Client(smtplib.SMTP):
    """smtplib's client, known to its session before it connects (the greeting is read within the
    connection, and that is where a server that hangs is met first), and that reads no reply once its
    session is cut."""

    def __init__(self, session: _Session) -> None:
        self.session = session
        session.client = self
        super().__init__(session.smtp.host, session.smtp.port, timeout=session.smtp.timeout)

    def getreply(self) -> tuple[int, bytes]:
        # Every read of the conversation starts here, after the socket is made: cut before, it is not
        # read; cut after, the socket it reads is shut.
        if self.session.is_cut():
            self.close()
            raise smtplib.SMTPServerDisconnected("cut short")
        return super().getreply()


class _Session:
    """One conversation with the SMTP server on a delivery thread, which the event loop may cut short:
    shutting its socket ends whatever read or write the thread waits in."""

    def __init__(self, smtp: SmtpSettings) -> None:
        self.smtp = smtp
        self.client: _Client | None = None
        self._lock = threading.Lock()
        self._cut = False

    def is_cut(self) -> bool:
        with self._lock:
            return self._cut

    def cut(self) -> None:
        with self._lock:
            self._cut = True
        sock = self.client.sock if self.client is not None else None  # after STARTTLS, the TLS one
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already: nothing left to cut
                # socket.socket's own shutdown, under TLS too: the descriptor itself, from this thread
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def send(self, msg: EmailMessage) -> None:
        smtp, where = self.smtp, f"{self.smtp.host}:{self.smtp.port}"
        try:
            with _Client(self) as client:
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
            error = e.smtp_error
            said = error.decode("utf-8", "replace") if isinstance(error, bytes) else error
            raise DeliveryFailed(f"the SMTP server {where} answered {e.smtp_code} {said}") from e
        except (OSError, smtplib.SMTPException) as e:  # refused, unreachable, timed out, TLS
            why = e or type(e).__name__
            raise DeliveryFailed(f"the SMTP server {where} could not be reached: {why}") from e
        if refused:
            raise DeliveryFailed(f"the SMTP server {where} refused the address {msg['To']}")
