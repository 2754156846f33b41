/**
 * The "Notifications…" dialog: where word goes when a job, a sweep or a
 * scheduled run ends (an e-mail address, a webhook URL), whether for every
 * end or failures only, and browser notifications while the Lab's tab is
 * hidden. "Send a test" saves and sends a test message, saying what
 * happened to each destination; Save closes once the server has kept the
 * choice. Problems (a malformed address or URL, the server's refusal) are
 * shown in the dialog, which stays open with what was typed.
 */
import { Dialog } from '@jupyterlab/apputils';

import { messageOf } from '../api/request';
import type { INotificationSettings } from '../api/types';
import { FormBody, field, h, select, textInput } from '../components/form';
import { BrowserNotices, browserPermission } from './browser';
import { NotificationsClient } from './client';
import { ITyped, choiceOf, problemOf, testLines, typedOf } from './values';

const CANCEL = 0;
const TEST = 1;
const SAVE = 2;

/** The fields, filled from the server's answer. */
class NotificationsBody extends FormBody<ITyped> {
  constructor(settings: INotificationSettings, browserAllowed: boolean) {
    super();
    const typed = typedOf(settings);
    this.email = textInput({
      value: typed.email,
      placeholder: 'name@example.org',
      'data-testid': 'gpu-env-notify-email'
    });
    this.webhook = textInput({
      value: typed.webhookUrl,
      placeholder: 'https://hooks.slack.com/services/…',
      'data-testid': 'gpu-env-notify-webhook'
    });
    this.on = select(
      [
        ['failed', 'Only when something fails'],
        ['all', 'Every end: succeeded, failed or cancelled']
      ],
      typed.everyEnd ? 'all' : 'failed',
      { 'data-testid': 'gpu-env-notify-on' }
    );
    this.browser = h('input', {
      type: 'checkbox',
      checked: browserAllowed,
      'data-testid': 'gpu-env-notify-browser'
    });
    this.status = h('div', {
      class: 'jp-GpuEnv-planStatus',
      'data-testid': 'gpu-env-notify-status',
      'aria-live': 'polite',
      hidden: true
    });
    const emailHint = settings.email_available
      ? 'Sent through this site’s mail server.'
      : 'E-mail is off on this server (its administrator sets ' +
        'c.GpuEnvApp.smtp_host); the address is kept for when it is on.';
    this.node.append(
      field('E-mail address', this.email, emailHint),
      field(
        'Webhook URL',
        this.webhook,
        'A Slack or Mattermost incoming webhook, or any URL that takes a ' +
          'JSON POST.'
      ),
      field(
        'When',
        this.on,
        'Jobs, sweeps (once, at their end) and scheduled runs.'
      ),
      h(
        'label',
        { class: 'jp-GpuEnv-checkRow' },
        this.browser,
        ' Browser notifications while this tab is hidden'
      ),
      this.status
    );
    this.node.dataset.testid = 'gpu-env-notify-form';
  }

  getValue(): ITyped {
    return {
      email: this.email.value,
      webhookUrl: this.webhook.value,
      everyEnd: this.on.value === 'all'
    };
  }

  /** Say something in the dialog: `problem` (kept open) or `info`. */
  say(state: 'problem' | 'failed' | 'info', lines: string[]): void {
    this.status.dataset.state = state;
    this.status.replaceChildren(...lines.map(line => h('p', {}, line)));
    this.status.hidden = false;
  }

  readonly email: HTMLInputElement;
  readonly webhook: HTMLInputElement;
  readonly on: HTMLSelectElement;
  readonly browser: HTMLInputElement;
  readonly status: HTMLDivElement;
}

/** A dialog whose Save closes only once the server kept the choice. */
class NotificationsDialog extends Dialog<ITyped> {
  constructor(
    private readonly _form: NotificationsBody,
    private readonly _client: NotificationsClient,
    private readonly _browser: BrowserNotices
  ) {
    super({
      title: 'Notifications',
      body: _form,
      buttons: [
        Dialog.cancelButton(),
        Dialog.createButton({ label: 'Send a test', displayType: 'default' }),
        Dialog.okButton({ label: 'Save' })
      ],
      defaultButton: SAVE,
      focusNodeSelector: 'input'
    });
    this.addClass('jp-GpuEnv-notifyDialog');
  }

  override resolve(index?: number): void {
    const chosen = index ?? SAVE;
    if (chosen === CANCEL) {
      super.resolve(index);
    } else if (!this._busy) {
      void this._save(chosen === TEST);
    }
  }

  private async _save(test: boolean): Promise<void> {
    const typed = this._form.getValue();
    const problem = problemOf(typed);
    if (problem !== null) {
      this._form.say('problem', [problem]);
      return;
    }
    this._busy = true;
    try {
      await this._client.put(choiceOf(typed));
      const allow = this._form.browser.checked;
      const permission =
        allow !== this._browser.allowed
          ? await this._browser.setAllowed(allow)
          : browserPermission();
      const browserLine: string[] = [];
      if (allow && permission !== 'granted') {
        // Not allowed by the browser: the box is cleared, and says why.
        await this._browser.setAllowed(false);
        this._form.browser.checked = false;
        browserLine.push(
          `The browser did not allow notifications (${permission}): allow ` +
            'them for this site in its settings, then tick the box again.'
        );
      }
      if (test) {
        this._form.say('info', ['Sending a test…']);
        const answer = await this._client.test();
        const failed = answer.deliveries.some(d => !d.delivered);
        this._form.say(failed ? 'failed' : 'info', [
          ...testLines(answer),
          ...browserLine
        ]);
      } else if (browserLine.length) {
        this._form.say('problem', browserLine);
      } else if (!this.isDisposed) {
        super.resolve(SAVE);
      }
    } catch (reason) {
      this._form.say('failed', [messageOf(reason)]);
    } finally {
      this._busy = false;
    }
  }

  private _busy = false;
}

/**
 * Open the dialog with the server's current choices; answers whether they
 * were saved. A failure to read them is shown as a dialog of its own.
 */
export async function editNotifications(
  client: NotificationsClient,
  browser: BrowserNotices
): Promise<boolean> {
  let settings: INotificationSettings;
  try {
    [settings] = await Promise.all([client.get(), browser.ready]);
  } catch (reason) {
    await Dialog.flush();
    const ok = Dialog.okButton({ label: 'Close' });
    await new Dialog({
      title: 'Notifications',
      body: `The notification choices could not be read: ${messageOf(reason)}`,
      buttons: [ok]
    }).launch();
    return false;
  }
  const dialog = new NotificationsDialog(
    new NotificationsBody(settings, browser.allowed),
    client,
    browser
  );
  const result = await dialog.launch();
  return result.button.accept;
}
