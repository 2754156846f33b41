/**
 * The Notifications dialog's rules and when a browser notification is due.
 */
import {
  browserNoticeDue,
  choiceOf,
  problemOf,
  testLines,
  typedOf
} from '../../src/notifications/values';

describe('problemOf', () => {
  const typed = { email: '', webhookUrl: '', everyEnd: false };

  it('accepts nothing, an address and an http(s) URL', () => {
    expect(problemOf(typed)).toBeNull();
    expect(
      problemOf({
        ...typed,
        email: ' alice@example.org ',
        webhookUrl: 'https://hooks.slack.com/services/T0/B0/x'
      })
    ).toBeNull();
    expect(
      problemOf({
        ...typed,
        webhookUrl: 'HTTP://chat.example.org:8065/hooks/abc'
      })
    ).toBeNull();
  });

  it('says what is wrong with an address or a URL', () => {
    expect(problemOf({ ...typed, email: 'alice' })).toContain(
      'name@example.org'
    );
    expect(problemOf({ ...typed, email: 'a@b' })).toContain('not an e-mail');
    for (const url of ['ftp://example.org/x', 'example.org/hook', 'https://']) {
      expect(problemOf({ ...typed, webhookUrl: url })).toContain(
        'http:// or https://'
      );
    }
  });
});

describe('choiceOf and typedOf', () => {
  it('send empty fields as none, and read them back', () => {
    const choice = choiceOf({ email: ' ', webhookUrl: '', everyEnd: true });
    expect(choice).toEqual({ email: null, webhook_url: null, on: 'all' });
    expect(
      typedOf({
        email: 'a@example.org',
        webhook_url: null,
        on: 'failed',
        email_available: false
      })
    ).toEqual({ email: 'a@example.org', webhookUrl: '', everyEnd: false });
  });
});

describe('testLines', () => {
  it('says what happened to each destination, then the summary', () => {
    expect(
      testLines({
        deliveries: [
          {
            channel: 'email',
            destination: 'a@example.org',
            delivered: false,
            message: 'Not sent: e-mail is off on this server.'
          },
          {
            channel: 'webhook',
            destination: 'https://hooks.slack.com/…',
            delivered: true,
            message: 'Delivered.'
          }
        ],
        message: '1 of 2 test messages delivered.'
      })
    ).toEqual([
      'E-mail to a@example.org: not delivered. Not sent: e-mail is off on this server.',
      'Webhook to https://hooks.slack.com/…: delivered.',
      '1 of 2 test messages delivered.'
    ]);
  });
});

describe('browserNoticeDue', () => {
  const due = {
    allowed: true,
    permission: 'granted',
    hidden: true,
    told: false
  };

  it('only when allowed, granted, hidden and not yet told', () => {
    expect(browserNoticeDue(due)).toBe(true);
    expect(browserNoticeDue({ ...due, allowed: false })).toBe(false);
    expect(browserNoticeDue({ ...due, permission: 'default' })).toBe(false);
    expect(browserNoticeDue({ ...due, hidden: false })).toBe(false);
    expect(browserNoticeDue({ ...due, told: true })).toBe(false);
  });
});
