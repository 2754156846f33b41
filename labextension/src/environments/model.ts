/**
 * EnvironmentsModel: the lists of environments and images, refreshed when
 * asked (the panel shown, a task ended) and otherwise every 30 s while the
 * panel is visible. One poll for both lists; it backs off on errors and
 * stands by while nobody looks.
 */
import { IDisposable } from '@lumino/disposable';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { ApiError, GpuEnvClient } from '../api';
import { IEnvironment, IImage } from '../types';

/** Milliseconds between two refreshes of the lists while visible. */
export const LIST_REFRESH_INTERVAL = 30 * 1000;

export class EnvironmentsModel implements IDisposable {
  constructor(options: EnvironmentsModel.IOptions) {
    this.client = options.client;
    this._poll = new Poll({
      name: 'jupyter-gpu-env:environments',
      factory: () => this._fetch(),
      frequency: {
        interval: options.interval ?? LIST_REFRESH_INTERVAL,
        backoff: true,
        max: 5 * 60 * 1000
      },
      standby: options.standby ?? 'when-hidden'
    });
  }

  readonly client: GpuEnvClient;

  /** Emitted after each answer or failure. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Environments, or null before the first answer. */
  get environments(): IEnvironment[] | null {
    return this._environments;
  }

  /** Images, or null before the first answer. */
  get images(): IImage[] | null {
    return this._images;
  }

  /** Why the environments could not be listed, if they could not. */
  get environmentsError(): ApiError | null {
    return this._envError;
  }

  /** Why the images could not be listed, if they could not. */
  get imagesError(): ApiError | null {
    return this._imageError;
  }

  /** The names already taken (for validating a new name). */
  get names(): string[] {
    return (this._environments ?? []).map(env => env.name);
  }

  get isDisposed(): boolean {
    return this._poll.isDisposed;
  }

  /** Ask both lists now; resolves after the answers. */
  async refresh(): Promise<void> {
    await this._poll.refresh();
    await this._poll.tick;
  }

  /**
   * Ask both lists now even while nobody looks (a palette command with the
   * sidebar closed); resolves after the answers, never rejects.
   */
  async load(): Promise<void> {
    await this._fetch().catch(() => undefined);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
  }

  private async _fetch(): Promise<void> {
    const [envs, images] = await Promise.allSettled([
      this.client.listEnvironments(),
      this.client.listImages()
    ]);
    if (envs.status === 'fulfilled') {
      this._environments = envs.value;
      this._envError = null;
    } else {
      this._envError = asApiError(envs.reason);
    }
    if (images.status === 'fulfilled') {
      this._images = images.value;
      this._imageError = null;
    } else {
      this._imageError = asApiError(images.reason);
    }
    this._changed.emit();
    if (this._envError || this._imageError) {
      // Rejecting makes the poll back off; the error is shown, never thrown.
      throw this._envError ?? this._imageError;
    }
  }

  private _poll: Poll;
  private _environments: IEnvironment[] | null = null;
  private _images: IImage[] | null = null;
  private _envError: ApiError | null = null;
  private _imageError: ApiError | null = null;
  private _changed = new Signal<this, void>(this);
}

export namespace EnvironmentsModel {
  export interface IOptions {
    client: GpuEnvClient;
    /** Milliseconds between two refreshes (default 30 s). */
    interval?: number;
    /** When to skip refreshes: a Poll standby value or a callback. */
    standby?: Poll.Standby | (() => boolean | Poll.Standby);
  }
}

/** Any rejection as an ApiError (what the sections display). */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError(String(error), 0, 'client_error');
}
