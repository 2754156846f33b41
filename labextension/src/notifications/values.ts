/**
 * Pure rules of the Notifications dialog and of browser notifications:
 * what was typed checked as the server checks it, a test's answer in words,
 * and when a browser notification is due.
 */
import type {
  INotificationChoice,
  INotificationSettings,
  INotificationTest
} from '../api/types';

/** The dialog's fields as typed. */
export interface ITyped {
  email: string;
  webhookUrl: string;
  everyEnd: boolean;
}

const EMAIL =
  /^[^@\s<>(),;:"[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const WEBHOOK = /^https?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/i;

/** Why `typed` cannot be saved, in words, or null (the server checks too). */
export function problemOf(typed: ITyped): string | null {
  const email = typed.email.trim();
  const url = typed.webhookUrl.trim();
  if (email && !EMAIL.test(email)) {
    return `'${email}' is not an e-mail address: give one, as name@example.org.`;
  }
  if (url && !WEBHOOK.test(url)) {
    return (
      `'${url}' is not a webhook URL: it must begin with http:// or ` +
      'https://, as a Slack or Mattermost incoming webhook does.'
    );
  }
  return null;
}

/** What `PUT notifications` is sent for `typed` (empty fields: none). */
export function choiceOf(typed: ITyped): INotificationChoice {
  return {
    email: typed.email.trim() || null,
    webhook_url: typed.webhookUrl.trim() || null,
    on: typed.everyEnd ? 'all' : 'failed'
  };
}

/** The dialog's fields filled from the server's answer. */
export function typedOf(settings: INotificationSettings): ITyped {
  return {
    email: settings.email ?? '',
    webhookUrl: settings.webhook_url ?? '',
    everyEnd: settings.on === 'all'
  };
}

/** A test's answer as lines: one per destination, then the summary. */
export function testLines(answer: INotificationTest): string[] {
  const lines = answer.deliveries.map(
    d =>
      `${d.channel === 'email' ? 'E-mail' : 'Webhook'} to ${d.destination}: ` +
      `${d.delivered ? 'delivered' : 'not delivered'}. ` +
      (d.delivered ? '' : d.message)
  );
  return [...lines.map(line => line.trim()), answer.message];
}

/**
 * Whether an end raises a browser notification: the user allowed it, the
 * browser granted it, the Lab's tab is hidden, and this end was not told.
 */
export function browserNoticeDue(state: {
  allowed: boolean;
  permission: string;
  hidden: boolean;
  told: boolean;
}): boolean {
  return (
    state.allowed &&
    state.permission === 'granted' &&
    state.hidden &&
    !state.told
  );
}
