/**
 * The "Environments" section: the platform's managed environments, the
 * user's own and those shared with the team, with their actions and
 * running tasks.
 */
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import { useSignals } from '../components/hooks';
import { ListingStatus } from '../components/listing';
import { SectionWidget } from '../sidebar/section-widget';
import { TaskList } from '../tasks/task-list';
import { environmentsIcon } from '../components/icons';
import { IEnvironment, ITask } from '../api/types';
import { EnvironmentActions } from './actions';
import { GPU_CHECK_KIND } from './gpucheck';
import { taskSummary } from './notify';
import { EnvironmentRow } from './row';

/** The kinds of task this section shows, and the tracker follows. */
export const ENVIRONMENT_TASKS: readonly string[] = [
  'clone',
  'create',
  'install',
  'publish',
  'pack',
  'undo',
  GPU_CHECK_KIND
];

const EMPTY: Record<IEnvironment['kind'], string> = {
  managed:
    'No managed environments here. Platform admins provide them with ' +
    'c.GpuEnvApp.managed_env_dirs (by default /envs where it exists).',
  own:
    'None of your own yet. Clone an environment (“Clone…” in its row’s ' +
    'menu) to add packages to it and register it as a kernel, or create ' +
    'one from an environment.yml (right-click it in the file browser).',
  shared:
    'Nothing shared with the team yet. “Share with team…” in the menu of ' +
    'one of yours publishes a read-only copy that teammates can clone.'
};

function Group(props: {
  kind: IEnvironment['kind'];
  title: string;
  envs: IEnvironment[];
  tasks: ITask[];
  /** Tasks on no listed environment (a clone being made), shown on top. */
  loose?: ITask[];
  actions: EnvironmentActions;
  commands: CommandRegistry;
}): JSX.Element {
  const { kind, envs, tasks, actions } = props;
  const tasksOf = (env: IEnvironment): ITask[] =>
    tasks.filter(t => targetName(t) === env.name);
  const loose = props.loose ?? [];
  return (
    <div
      className="jp-GpuEnv-group jp-GpuEnv-envGroup"
      data-testid={`gpu-env-env-list-${kind}`}
    >
      <h3 className="jp-GpuEnv-groupTitle">
        {props.title}
        <span className="jp-GpuEnv-badge" data-tone="quiet">
          {envs.length}
        </span>
      </h3>
      <TaskList
        tasks={loose}
        onCancel={id => void actions.cancel(id)}
        summarize={taskSummary}
      />
      {envs.length > 0 ? (
        <ul className="jp-GpuEnv-list">
          {envs.map(env => (
            <EnvironmentRow
              key={env.name}
              env={env}
              actions={actions}
              commands={props.commands}
              tasks={tasksOf(env)}
            />
          ))}
        </ul>
      ) : (
        loose.length === 0 && (
          <div
            className="jp-GpuEnv-empty jp-GpuEnv-emptySmall"
            data-testid={`gpu-env-env-empty-${kind}`}
          >
            <environmentsIcon.react tag="span" className="jp-GpuEnv-icon" />
            <p>{EMPTY[kind]}</p>
          </div>
        )
      )}
    </div>
  );
}

export function EnvironmentsView(props: {
  actions: EnvironmentActions;
  commands: CommandRegistry;
}): JSX.Element {
  const { actions } = props;
  const { model, tracker } = actions;
  useSignals([model.changed, tracker.changed]);
  const envs = model.environments;
  const error = model.environmentsError;
  // Clones, creations, package changes, publications, packs and GPU
  // checks; every other kind is another section's.
  const tasks = tracker.tasks.filter(t => ENVIRONMENT_TASKS.includes(t.kind));
  const listed = new Set((envs ?? []).map(e => e.name));
  const shared = (envs ?? []).filter(e => e.kind === 'shared');
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-environments">
      <ListingStatus
        what="environments"
        error={error}
        pending={envs === null}
      />
      {envs !== null && (
        <>
          <Group
            kind="managed"
            title="Managed"
            envs={envs.filter(e => e.kind === 'managed')}
            tasks={tasks}
            actions={actions}
            commands={props.commands}
          />
          <Group
            kind="own"
            title="Mine"
            envs={envs.filter(e => e.kind === 'own')}
            tasks={tasks}
            loose={tasks.filter(t => !listed.has(targetName(t)))}
            actions={actions}
            commands={props.commands}
          />
          {(model.sharing || shared.length > 0) && (
            <Group
              kind="shared"
              title="Shared"
              envs={shared}
              tasks={tasks}
              actions={actions}
              commands={props.commands}
            />
          )}
        </>
      )}
    </div>
  );
}

/**
 * `environments/x`, `environments/x/gpu` and `images/x` are all about
 * environment `x`.
 */
function targetName(task: ITask): string {
  return task.target?.split('/')[1] ?? '';
}

/** The section widget; lists and tasks are refreshed whenever it is shown. */
export class EnvironmentsSection extends SectionWidget {
  constructor(
    private readonly _actions: EnvironmentActions,
    private readonly _commands: CommandRegistry
  ) {
    super('environments', 'Environments');
  }

  protected onShown(): void {
    void this._actions.model.refresh();
    // Tasks started meanwhile from another tab or a terminal.
    this._actions.tracker.attach().catch(reason => {
      console.warn('jupyter-gpu-env: cannot list running tasks.', reason);
    });
  }

  protected render(): JSX.Element {
    return (
      <EnvironmentsView actions={this._actions} commands={this._commands} />
    );
  }
}
