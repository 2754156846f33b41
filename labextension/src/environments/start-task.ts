/**
 * The dialogs that start a change and ask again when the server refuses it
 * with a message to show (a bad or taken name): clone, create from a file,
 * share.
 */
import { ApiError, asApiError } from '../api/request';
import type { ITask } from '../api/types';
import { TaskTracker } from '../tasks/tracker';
import { cleanMessage } from './format';
import { EnvironmentsModel } from './model';
import { notifyError } from './notify';

/** Statuses whose message says what to change (shown in the dialog again). */
const REFUSALS = [400, 404, 409];

export interface IAskUntilStarted<T> {
  tracker: TaskTracker;
  /** Read again after a refusal, so that the dialog checks fresh names. */
  model: EnvironmentsModel;
  /**
   * Show the dialog, with the server's `refusal` of the previous try; the
   * value, or null when the user backs out.
   */
  ask(refusal: string | undefined): Promise<T | null>;
  start(value: T): Promise<ITask>;
  /** What the notification says before the reason of a failure. */
  failure(value: T): string;
  /** Refusals the dialog shows (by default 400, 404 and 409). */
  retryable?(error: ApiError): boolean;
}

/**
 * Ask, start, and track the task; ask again while the server refuses what
 * was asked; any other failure is notified. Answers whether it started.
 */
export async function askUntilStarted<T>(
  steps: IAskUntilStarted<T>
): Promise<boolean> {
  const retryable =
    steps.retryable ?? ((error: ApiError) => REFUSALS.includes(error.status));
  let refusal: string | undefined;
  for (;;) {
    const value = await steps.ask(refusal);
    if (value === null) {
      return false;
    }
    try {
      steps.tracker.track(await steps.start(value));
      return true;
    } catch (reason) {
      const error = asApiError(reason);
      if (!retryable(error)) {
        notifyError(steps.failure(value), error);
        return false;
      }
      refusal = cleanMessage(error.message);
      await steps.model.load();
    }
  }
}
