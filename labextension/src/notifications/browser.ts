/**
 * Browser notifications when a job or a sweep ends while the Lab's tab is
 * hidden, once per end, where the user allowed them (the choice kept in the
 * state database) and the browser granted it.
 */
import { IStateDB } from '@jupyterlab/statedb';

import type { IJob, ISweep } from '../api/types';
import { endedName, endedWord } from '../jobs/format';
import { browserNoticeDue } from './values';

/** The state database key of the user's choice. */
export const BROWSER_NOTICES_KEY = 'jupyter-gpu-env:browser-notifications';

/** The browser's permission: `granted`, `denied`, `default`, `unsupported`. */
export function browserPermission(): string {
  return typeof window.Notification === 'undefined'
    ? 'unsupported'
    : window.Notification.permission;
}

export class BrowserNotices {
  constructor(private readonly _state: IStateDB | null) {
    this.ready = this._load();
  }

  /** Resolves once the saved choice has been read. */
  readonly ready: Promise<void>;

  /** Whether the user allowed browser notifications. */
  get allowed(): boolean {
    return this._allowed;
  }

  /**
   * Allow or forbid them; allowing asks the browser's permission first.
   * Answers the browser's permission (what the dialog says).
   */
  async setAllowed(allowed: boolean): Promise<string> {
    let permission = browserPermission();
    if (allowed && permission === 'default') {
      permission = await window.Notification.requestPermission();
    }
    this._allowed = allowed;
    await this._state?.save(BROWSER_NOTICES_KEY, allowed);
    return permission;
  }

  jobEnded(job: IJob): void {
    const why = job.state === 'failed' && job.message ? `: ${job.message}` : '';
    this._raise(`job-${job.id}`, `${endedName(job)} ${endedWord(job)}`, why);
  }

  sweepEnded(sweep: ISweep): void {
    const { counts, size } = sweep;
    const body =
      `${counts.succeeded ?? 0} of ${size} runs succeeded` +
      (counts.failed ? `, ${counts.failed} failed` : '');
    this._raise(
      `sweep-${sweep.id}-${sweep.finished_at ?? ''}`,
      `Sweep '${sweep.name}' ${sweep.state}`,
      body
    );
  }

  private _raise(key: string, title: string, body: string): void {
    const due = browserNoticeDue({
      allowed: this._allowed,
      permission: browserPermission(),
      hidden: document.hidden,
      told: this._told.has(key)
    });
    if (!due) {
      return;
    }
    this._told.add(key);
    const notice = new window.Notification(title, {
      body: body.replace(/^: /, ''),
      tag: key
    });
    notice.onclick = () => {
      window.focus();
      notice.close();
    };
  }

  private async _load(): Promise<void> {
    try {
      this._allowed = (await this._state?.fetch(BROWSER_NOTICES_KEY)) === true;
    } catch (reason) {
      console.warn('jupyter-gpu-env: cannot read a choice.', reason);
    }
  }

  private _allowed = false;
  private readonly _told = new Set<string>();
}
