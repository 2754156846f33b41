/**
 * EnvironmentsModel: the list of environments, refreshed when asked (the
 * section shown, a task ended) and otherwise every 30 s while the section is
 * visible; every 2 s while the server measures sizes.
 */
import { ServerConnection } from '@jupyterlab/services';

import type { ApiError } from '../api/request';
import type { IEnvironment } from '../api/types';
import { PolledModel, scheduled } from '../components/polled';
import { EnvironmentsClient } from './client';

/** Milliseconds between two refreshes of the lists while visible. */
export const LIST_REFRESH_INTERVAL = 30 * 1000;

/** Milliseconds until the next list while sizes are being measured. */
export const MEASURING_REFRESH_DELAY = 2 * 1000;

export class EnvironmentsModel extends PolledModel {
  constructor(options: EnvironmentsModel.IOptions) {
    super(
      scheduled('jupyter-gpu-env:environments', LIST_REFRESH_INTERVAL, options)
    );
    this.client = new EnvironmentsClient(options.serverSettings);
  }

  readonly client: EnvironmentsClient;

  /** Environments, or null before the first answer. */
  get environments(): IEnvironment[] | null {
    return this._environments;
  }

  /** Whether the server has a shared folder to publish to. */
  get sharing(): boolean {
    return this._sharing;
  }

  /** Why the environments could not be listed, if they could not. */
  get environmentsError(): ApiError | null {
    return this.error;
  }

  /** The names already taken (for validating a new name). */
  get names(): string[] {
    return (this._environments ?? []).map(env => env.name);
  }

  protected async fetch(): Promise<void> {
    const listed = await this.client.listAll();
    this._environments = listed.environments;
    this._sharing = listed.sharing;
    if (this._environments.some(env => env.size_state === 'measuring')) {
      this._askAgainSoon();
    }
  }

  override dispose(): void {
    window.clearTimeout(this._soon);
    super.dispose();
  }

  /** The server measures sizes in the background: ask again shortly, not in 30 s. */
  private _askAgainSoon(): void {
    window.clearTimeout(this._soon);
    this._soon = window.setTimeout(() => {
      if (this.isWanted()) {
        void this.refresh();
      }
    }, MEASURING_REFRESH_DELAY);
  }

  private _soon = 0;
  private _sharing = false;
  private _environments: IEnvironment[] | null = null;
}

export namespace EnvironmentsModel {
  /**
   * `interval`: 30 s by default; `visible`: whether the section is shown.
   */
  export interface IOptions extends PolledModel.ISchedule {
    serverSettings?: ServerConnection.ISettings;
  }
}
