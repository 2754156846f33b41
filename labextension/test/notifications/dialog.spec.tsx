/**
 * The Notifications dialog as a user meets it, in jsdom: JupyterLab's own
 * Dialog with the form, a recording client in place of the server, and the
 * real browser-notification choice (jsdom has no Notification API, so the
 * browser answers `unsupported`, as a browser that refuses would).
 */
import { Dialog } from '@jupyterlab/apputils';
import { fireEvent, screen, waitFor } from '@testing-library/react';

import type {
  INotificationChoice,
  INotificationSettings,
  INotificationTest
} from '../../src/api/types';
import { BrowserNotices } from '../../src/notifications/browser';
import { NotificationsClient } from '../../src/notifications/client';
import { editNotifications } from '../../src/notifications/dialog';

const SAVED: INotificationSettings = {
  email: 'ada@example.org',
  webhook_url: null,
  on: 'failed',
  email_available: true
};

/** A client answering as the server would, recording what it was sent. */
function recordingClient(
  options: {
    settings?: INotificationSettings;
    readFails?: string;
    putFails?: string;
    test?: INotificationTest;
  } = {}
) {
  const sent: INotificationChoice[] = [];
  let tests = 0;
  const client = {
    get: async () => {
      if (options.readFails) {
        throw new Error(options.readFails);
      }
      return options.settings ?? SAVED;
    },
    put: async (choice: INotificationChoice) => {
      if (options.putFails) {
        throw new Error(options.putFails);
      }
      sent.push(choice);
      return { ...SAVED, ...choice };
    },
    test: async () => {
      tests += 1;
      return options.test ?? { deliveries: [], message: 'Nothing to send.' };
    }
  } as unknown as NotificationsClient;
  return { client, sent, tests: () => tests };
}

/** A footer button by its label (jsdom does not open a `<dialog>`, so its
 * content is not in the accessibility tree that `getByRole` reads). */
function button(label: string): HTMLElement {
  const found = [
    ...document.body.querySelectorAll<HTMLElement>('.jp-Dialog-button')
  ].filter(node => node.textContent?.trim() === label);
  expect(found).toHaveLength(1);
  return found[0];
}

function status(): HTMLElement {
  return screen.getByTestId('gpu-env-notify-status');
}

function type(testId: string, value: string): void {
  fireEvent.input(screen.getByTestId(testId), { target: { value } });
}

/**
 * Open the dialog. A dialog a test leaves open is disposed after it (its
 * launch rejects then): the answer is then `'left open'`.
 */
function open(
  client: NotificationsClient,
  browser = new BrowserNotices(null)
): Promise<boolean | 'left open'> {
  return editNotifications(client, browser).catch(() => 'left open' as const);
}

afterEach(() => {
  // Whatever a test left open is closed, so the next one finds only its own.
  Dialog.flush();
});

describe('the Notifications dialog', () => {
  it('opens with the saved choice and Save sends what was typed', async () => {
    const { client, sent } = recordingClient();
    const done = open(client);
    await screen.findByTestId('gpu-env-notify-form');
    const email = screen.getByTestId<HTMLInputElement>('gpu-env-notify-email');
    expect(email.value).toBe('ada@example.org');
    expect(
      screen.getByTestId<HTMLSelectElement>('gpu-env-notify-on').value
    ).toBe('failed');

    type('gpu-env-notify-webhook', '  https://hooks.example.org/T1  ');
    fireEvent.change(screen.getByTestId('gpu-env-notify-on'), {
      target: { value: 'all' }
    });
    fireEvent.click(button('Save'));

    await expect(done).resolves.toBe(true);
    expect(sent).toEqual([
      {
        email: 'ada@example.org',
        webhook_url: 'https://hooks.example.org/T1',
        on: 'all'
      }
    ]);
  });

  it('says what is malformed, sends nothing and keeps what was typed', async () => {
    const { client, sent } = recordingClient();
    void open(client);
    await screen.findByTestId('gpu-env-notify-form');

    type('gpu-env-notify-email', 'ada at example');
    fireEvent.click(button('Save'));
    expect(status().hidden).toBe(false);
    expect(status().dataset.state).toBe('problem');
    expect(status().textContent).toContain(
      "'ada at example' is not an e-mail address"
    );

    type('gpu-env-notify-email', '');
    type('gpu-env-notify-webhook', 'hooks.example.org');
    fireEvent.click(button('Send a test'));
    expect(status().textContent).toContain('must begin with http://');
    expect(sent).toEqual([]);
    expect(
      screen.getByTestId<HTMLInputElement>('gpu-env-notify-webhook').value
    ).toBe('hooks.example.org');
  });

  it('Send a test saves first, then says what happened to each destination', async () => {
    const { client, sent, tests } = recordingClient({
      test: {
        deliveries: [
          {
            channel: 'email',
            destination: 'ada@example.org',
            delivered: true,
            message: ''
          },
          {
            channel: 'webhook',
            destination: 'https://hooks.example.org/T1',
            delivered: false,
            message: 'HTTP 404 from the webhook.'
          }
        ],
        message: '1 of 2 destinations got the test.'
      }
    });
    void open(client);
    await screen.findByTestId('gpu-env-notify-form');
    type('gpu-env-notify-webhook', 'https://hooks.example.org/T1');
    fireEvent.click(button('Send a test'));

    await waitFor(() =>
      expect(status().textContent).toContain('1 of 2 destinations')
    );
    expect(sent).toHaveLength(1);
    expect(tests()).toBe(1);
    expect(status().dataset.state).toBe('failed');
    const lines = [...status().querySelectorAll('p')].map(p => p.textContent);
    expect(lines).toEqual([
      'E-mail to ada@example.org: delivered.',
      'Webhook to https://hooks.example.org/T1: not delivered. HTTP 404 from the webhook.',
      '1 of 2 destinations got the test.'
    ]);
    // the dialog stays open after a test
    expect(screen.getByTestId('gpu-env-notify-form')).toBeTruthy();
  });

  it('a refusal by the server is shown and the dialog stays open', async () => {
    const { client } = recordingClient({
      putFails: 'The webhook URL is not allowed here.'
    });
    let settled = false;
    void open(client).then(() => {
      settled = true;
    });
    await screen.findByTestId('gpu-env-notify-form');
    fireEvent.click(button('Save'));
    await waitFor(() =>
      expect(status().textContent).toContain('is not allowed here')
    );
    expect(status().dataset.state).toBe('failed');
    expect(settled).toBe(false);
  });

  it('a browser that does not allow notifications clears the box and says how to allow them', async () => {
    const { client, sent } = recordingClient();
    const browser = new BrowserNotices(null);
    void open(client, browser);
    await screen.findByTestId('gpu-env-notify-form');
    const box = screen.getByTestId<HTMLInputElement>('gpu-env-notify-browser');
    expect(box.checked).toBe(false);
    fireEvent.click(box);
    fireEvent.click(button('Save'));

    await waitFor(() =>
      expect(status().textContent).toContain(
        'The browser did not allow notifications (unsupported)'
      )
    );
    expect(box.checked).toBe(false);
    expect(browser.allowed).toBe(false);
    expect(sent).toHaveLength(1); // the rest of the choice was kept
  });

  it('choices that cannot be read are a dialog of their own', async () => {
    const { client } = recordingClient({ readFails: 'Forbidden' });
    const done = open(client);
    const said = await screen.findByText(
      'The notification choices could not be read: Forbidden'
    );
    expect(said).toBeTruthy();
    expect(screen.queryByTestId('gpu-env-notify-form')).toBeNull();
    fireEvent.click(button('Close'));
    await expect(done).resolves.toBe(false);
  });
});
