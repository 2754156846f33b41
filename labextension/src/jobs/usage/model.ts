/**
 * JobUsage: what the Jobs section's usage line and chart show (GPU-hours
 * used, the weekly chart) and the server's `gpu_idle_seconds`, asked with
 * the job list but at most once a minute, or sooner after a job started or
 * ended.
 */
import type { IUsageReport, IUsageWeeks } from '../../api/types';
import { JobsClient } from '../client';

/** The usage line is asked again at least this often (ms). */
const USAGE_INTERVAL = 60000;
/** Weeks in the usage chart. */
export const USAGE_WEEKS = 8;
/** The server's default for `gpu_idle_seconds`, until it has answered. */
const DEFAULT_GPU_IDLE_SECONDS = 600;

export class JobUsage {
  constructor(private readonly _client: JobsClient) {}

  get report(): IUsageReport | null {
    return this._report;
  }

  /** The weekly GPU-hours, oldest week first; null until asked. */
  get weeks(): IUsageWeeks | null {
    return this._weeks;
  }

  /** Seconds a running job's GPU may idle before a warning. */
  get gpuIdleSeconds(): number {
    return this._gpuIdleSeconds;
  }

  /** Ask again with the next list. */
  invalidate(): void {
    this._askedAt = 0;
  }

  /**
   * Ask what is due (nothing within a minute of the last answer); the
   * answer is kept only once `apply()` is called, with the job list's.
   */
  async ask(): Promise<{ asked: boolean; apply: () => void }> {
    if (Date.now() - this._askedAt < USAGE_INTERVAL) {
      return { asked: false, apply: () => undefined };
    }
    const [report, weeks, idleSeconds] = await Promise.all([
      this._client.usage(),
      this._client.usageWeeks(USAGE_WEEKS).catch(() => this._weeks),
      this._gpuIdleAsked
        ? this._gpuIdleSeconds
        : this._client
            .backendList()
            .then(answer => {
              this._gpuIdleAsked = true;
              return answer.gpu_idle_seconds;
            })
            .catch(() => this._gpuIdleSeconds)
    ]);
    return {
      asked: true,
      apply: () => {
        this._report = report;
        this._weeks = weeks;
        this._gpuIdleSeconds = idleSeconds;
        this._askedAt = Date.now();
      }
    };
  }

  private _report: IUsageReport | null = null;
  private _weeks: IUsageWeeks | null = null;
  private _gpuIdleSeconds = DEFAULT_GPU_IDLE_SECONDS;
  private _gpuIdleAsked = false;
  private _askedAt = 0;
}
