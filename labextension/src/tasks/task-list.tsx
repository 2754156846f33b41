/**
 * A running task, inline: its title, a progress bar, what it is doing now,
 * and a Cancel button; once ended, its last word for a few seconds.
 */
import { ToolbarButtonComponent, closeIcon } from '@jupyterlab/ui-components';
import React from 'react';

import { isFinal } from './tracker';
import type { ITask } from '../api/types';
import { BarLevel, ProgressBar } from '../components/figures/progress';

export interface ITaskListProps {
  onCancel: (id: string) => void;
  /** The line shown under a finished task (default: its last message). */
  summarize?: (task: ITask) => string;
}

export function TaskProgress(
  props: ITaskListProps & { task: ITask }
): JSX.Element {
  const { task } = props;
  const final = isFinal(task);
  const message =
    final && props.summarize ? props.summarize(task) : task.message;
  const percent = Math.round(Math.min(1, Math.max(0, task.progress)) * 100);
  const level: BarLevel =
    task.state === 'failed'
      ? 'critical'
      : task.state === 'cancelled'
        ? 'warn'
        : 'ok';
  return (
    <li
      className="jp-GpuEnv-task"
      data-testid="gpu-env-task"
      data-state={task.state}
      data-kind={task.kind}
      data-target={task.target ?? ''}
    >
      <div className="jp-GpuEnv-rowHeader jp-GpuEnv-rowActions">
        <span className="jp-GpuEnv-taskTitle" title={task.title}>
          {task.title}
        </span>
        <span className="jp-GpuEnv-taskPercent">
          {final ? stateLabel(task) : `${percent} %`}
        </span>
        {!final && (
          <ToolbarButtonComponent
            icon={closeIcon}
            tooltip="Cancel: stop it and keep nothing"
            dataset={{ testid: 'gpu-env-task-cancel' }}
            onClick={() => props.onCancel(task.id)}
          />
        )}
      </div>
      <ProgressBar
        percent={task.state === 'pending' ? null : percent}
        level={level}
        label={task.title}
        valueNow={percent}
      />
      {message && (
        <div className="jp-GpuEnv-taskMessage jp-GpuEnv-note" title={message}>
          {message}
        </div>
      )}
    </li>
  );
}

function stateLabel(task: ITask): string {
  switch (task.state) {
    case 'succeeded':
      return 'done';
    case 'failed':
      return 'failed';
    default:
      return 'cancelled';
  }
}

/** The tasks of a section, or nothing when there are none. */
export function TaskList(
  props: ITaskListProps & { tasks: ITask[] }
): JSX.Element | null {
  if (props.tasks.length === 0) {
    return null;
  }
  return (
    <ul
      className="jp-GpuEnv-list jp-GpuEnv-taskList"
      aria-label="Running tasks"
    >
      {props.tasks.map(task => (
        <TaskProgress
          key={task.id}
          task={task}
          onCancel={props.onCancel}
          summarize={props.summarize}
        />
      ))}
    </ul>
  );
}
