/**
 * GpuMonitor: polls `GET gpu` on an interval and keeps the latest answer
 * (kept, stale, while later requests fail: `error` says why).
 */
import { PolledModel } from '../components/polled';
import type { IGpuSnapshot } from '../api/types';
import { GpuClient } from './client';

/** The default refresh interval, in milliseconds (the settings' default too). */
export const DEFAULT_REFRESH_INTERVAL = 2000;
/** The shortest refresh interval accepted, in milliseconds. */
export const MIN_REFRESH_INTERVAL = 500;
/** The longest refresh interval accepted (an hour), in milliseconds. */
export const MAX_REFRESH_INTERVAL = 60 * 60 * 1000;
/** The longest wait between two tries while the server fails, in milliseconds. */
export const MAX_BACKOFF_INTERVAL = 30 * 1000;

export class GpuMonitor extends PolledModel {
  constructor(options: GpuMonitor.IOptions) {
    super({
      name: 'jupyter-gpu-env:gpu',
      interval: clampInterval(options.interval ?? DEFAULT_REFRESH_INTERVAL),
      maxBackoff: MAX_BACKOFF_INTERVAL,
      visible: options.visible
    });
    this.client = options.client;
  }

  readonly client: GpuClient;

  /** The latest snapshot; null before the first answer. */
  get snapshot(): IGpuSnapshot | null {
    return this._snapshot;
  }

  /** Milliseconds between two requests, kept within the accepted range. */
  override get interval(): number {
    return super.interval;
  }
  override set interval(value: number) {
    super.interval = clampInterval(value);
  }

  protected async fetch(): Promise<void> {
    this._snapshot = await this.client.snapshot();
  }

  private _snapshot: IGpuSnapshot | null = null;
}

export namespace GpuMonitor {
  /** `interval`: at least 500 ms; `visible`: whether the section shows. */
  export interface IOptions extends PolledModel.ISchedule {
    client: GpuClient;
  }
}

/** Keep an interval setting within what the poll accepts. */
export function clampInterval(value: number): number {
  if (!Number.isFinite(value)) {
    return DEFAULT_REFRESH_INTERVAL;
  }
  return Math.min(
    MAX_REFRESH_INTERVAL,
    Math.max(MIN_REFRESH_INTERVAL, Math.round(value))
  );
}
