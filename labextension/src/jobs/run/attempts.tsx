/**
 * An opportunistic job's story: its priority as a badge where not normal,
 * and its earlier attempts ("Preempted twice, resumed") with when and why
 * each ended and how many cells it had done.
 */
import React from 'react';

import type { IJob, IJobAttempt } from '../../api/types';
import { formatClock, formatTime } from '../format';
import {
  attemptEnd,
  attemptsSummary,
  priorityLabel
} from '../../advice/values';

/** "Opportunistic": the job's priority, where it is not normal. */
export function PriorityBadge(props: { job: IJob }): JSX.Element | null {
  const { priority } = props.job;
  if (!priority || priority === 'normal') {
    return null;
  }
  return (
    <span
      className="jp-GpuEnv-badge jp-GpuEnv-priorityBadge"
      data-priority={priority}
      data-testid="gpu-env-job-priority"
      title="Sent as opportunistic: it may be stopped for other work, then resumes from its checkpoint folder"
    >
      {priorityLabel(priority)}
    </span>
  );
}

/** One attempt: "1: preempted at 14:20 after 12:03, 5 cells done". */
export function describeAttempt(attempt: IJobAttempt): string {
  const parts = [`${attempt.number}: ${attemptEnd(attempt.reason)}`];
  if (attempt.ended_at !== null) {
    parts.push(`at ${formatTime(attempt.ended_at)}`);
  }
  if (attempt.started_at !== null && attempt.ended_at !== null) {
    parts.push(
      `after ${formatClock(Math.max(0, attempt.ended_at - attempt.started_at))}`
    );
  }
  const cells = `${attempt.cells_done} cell${attempt.cells_done === 1 ? '' : 's'} done`;
  return `${parts.join(' ')}, ${cells}`;
}

/** The attempts, summed up in a line that opens to the list. */
export function Attempts(props: { job: IJob }): JSX.Element | null {
  const attempts = props.job.attempts ?? [];
  if (attempts.length === 0) {
    return null;
  }
  return (
    <details
      className="jp-GpuEnv-attempts jp-GpuEnv-note"
      data-testid="gpu-env-job-attempts"
    >
      <summary>{attemptsSummary(attempts)}</summary>
      <ol>
        {attempts.map(attempt => (
          <li
            key={attempt.number}
            data-reason={attempt.reason}
            title={attempt.message || undefined}
          >
            {describeAttempt(attempt)}
            {attempt.message && (
              <span className="jp-GpuEnv-attemptWhy"> — {attempt.message}</span>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** The attempts in one short badge, the list in its tooltip (the table). */
export function AttemptsBadge(props: { job: IJob }): JSX.Element | null {
  const attempts = props.job.attempts ?? [];
  if (attempts.length === 0) {
    return null;
  }
  return (
    <span
      className="jp-GpuEnv-badge"
      data-testid="gpu-env-job-attempts-badge"
      title={attempts.map(describeAttempt).join('\n')}
    >
      {attemptsSummary(attempts)}
    </span>
  );
}
