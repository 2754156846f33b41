/**
 * EnvironmentsModel: the lists of environments and images, refreshed when
 * asked (the section shown, a task ended) and otherwise every 30 s while
 * either section is visible. One poll for both lists.
 */
import { ServerConnection } from '@jupyterlab/services';

import { ApiError, asApiError } from '../api/request';
import type { IEnvironment, IImage } from '../api/types';
import { PolledModel, scheduled } from '../components/polled';
import { ImagesClient } from '../images/client';
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
    this.images = new ImagesClient(options.serverSettings);
  }

  readonly client: EnvironmentsClient;
  readonly images: ImagesClient;

  /** Environments, or null before the first answer. */
  get environments(): IEnvironment[] | null {
    return this._environments;
  }

  /** Whether the server has a shared folder to publish to. */
  get sharing(): boolean {
    return this._sharing;
  }

  /** Images, or null before the first answer. */
  get imageList(): IImage[] | null {
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

  protected async fetch(): Promise<void> {
    const [envs, images] = await Promise.allSettled([
      this.client.listAll(),
      this.images.list()
    ]);
    this._envError = null;
    this._imageError = null;
    if (envs.status === 'fulfilled') {
      this._environments = envs.value.environments;
      this._sharing = envs.value.sharing;
      if (this._environments.some(env => env.size_state === 'measuring')) {
        this._askAgainSoon();
      }
    } else {
      this._envError = asApiError(envs.reason);
    }
    if (images.status === 'fulfilled') {
      this._images = images.value;
    } else {
      this._imageError = asApiError(images.reason);
    }
    const error = this._envError ?? this._imageError;
    if (error) {
      throw error;
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
  private _images: IImage[] | null = null;
  private _envError: ApiError | null = null;
  private _imageError: ApiError | null = null;
}

export namespace EnvironmentsModel {
  /**
   * `interval`: 30 s by default; `visible`: whether either section is shown.
   */
  export interface IOptions extends PolledModel.ISchedule {
    serverSettings?: ServerConnection.ISettings;
  }
}
