/**
 * One environment in the Environments section: name, facts, badges, the
 * row's actions, its running tasks, and (expanded) its package list. A
 * shared environment's row says who shared it and what for.
 *
 * The name keeps the width: one button stays on the row (the kernel toggle,
 * whose state shows at a glance) and every action is in the labelled "⋯"
 * menu, so names are readable at the sidebar's default width.
 */
import { ToolbarButtonComponent } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React, { useState } from 'react';

import { kernelRegisterIcon, kernelUnregisterIcon } from '../components/icons';
import { MenuButton } from '../components/menu-button';
import { ExpandableRow } from '../components/row';
import { TaskList } from '../tasks/task-list';
import { isFinal } from '../tasks/tracker';
import { IEnvironment, ITask } from '../api/types';
import { EnvironmentActions } from './actions';
import { environmentMenu, sharedEnvironmentMenu } from './commands';
import { describeEnvironment, describeOrigin } from './format';
import { taskSummary } from './notify';
import { PackageList } from './packages/list';

const NO_IPYKERNEL =
  'ipykernel is not installed in this environment, so it cannot run ' +
  'notebooks: add ipykernel with “Add or remove packages…” in its menu.';

function Badges(props: { env: IEnvironment }): JSX.Element {
  const { env } = props;
  return (
    <div className="jp-GpuEnv-envBadges">
      {env.kernel_name ? (
        <span
          className="jp-GpuEnv-badge"
          data-tone="brand"
          title={`Registered as the Jupyter kernel '${env.kernel_name}'`}
          data-testid="gpu-env-badge-kernel"
        >
          kernel
        </span>
      ) : null}
      {env.has_ipykernel ? (
        <span
          className="jp-GpuEnv-badge"
          title="ipykernel is installed: it can run notebooks"
        >
          ipykernel
        </span>
      ) : (
        <span
          className="jp-GpuEnv-badge"
          data-tone="warn"
          title={NO_IPYKERNEL}
          data-testid="gpu-env-badge-no-ipykernel"
        >
          no ipykernel
        </span>
      )}
      {env.source_name && (
        <span
          className="jp-GpuEnv-note"
          title={env.source ?? undefined}
          data-testid="gpu-env-env-origin"
        >
          {describeOrigin(env)}
        </span>
      )}
    </div>
  );
}

/** Who shared it, and their one line about it (cut to the row, in full on hover). */
function SharedBy(props: { env: IEnvironment }): JSX.Element {
  const { env } = props;
  return (
    <div className="jp-GpuEnv-sharedBy">
      {env.description && (
        <div
          className="jp-GpuEnv-envDescription"
          title={env.description}
          data-testid="gpu-env-env-description"
        >
          {env.description}
        </div>
      )}
      <div className="jp-GpuEnv-note" data-testid="gpu-env-env-owner">
        {env.owner ? `by ${env.owner}` : 'shared with the team'}
        {env.can_unpublish ? ' (you)' : ''}
      </div>
    </div>
  );
}

function Actions(props: {
  env: IEnvironment;
  actions: EnvironmentActions;
  commands: CommandRegistry;
  changing: boolean;
}): JSX.Element {
  const { env, actions, changing } = props;
  const registered = env.kernel_name !== null;
  const kernelTip = registered
    ? `Remove the kernel '${env.kernel_name}'`
    : env.has_ipykernel
      ? 'Register as a Jupyter kernel (shows in the Launcher)'
      : `Cannot register a kernel: ${NO_IPYKERNEL}`;
  return (
    <div className="jp-GpuEnv-rowActions" role="toolbar">
      <ToolbarButtonComponent
        icon={registered ? kernelUnregisterIcon : kernelRegisterIcon}
        className={
          !registered && !env.has_ipykernel
            ? 'jp-GpuEnv-unavailable'
            : undefined
        }
        pressed={registered}
        tooltip={kernelTip}
        enabled={!changing}
        dataset={{ action: 'kernel' }}
        onClick={() => void actions.toggleKernel(env)}
      />
      <MenuButton
        commands={props.commands}
        label={`Actions on '${env.name}'`}
        entries={
          env.kind === 'shared'
            ? sharedEnvironmentMenu(env.name)
            : environmentMenu(env.name)
        }
      />
    </div>
  );
}

export function EnvironmentRow(props: {
  env: IEnvironment;
  actions: EnvironmentActions;
  commands: CommandRegistry;
  /** The tasks working on this environment (changes, packs). */
  tasks: ITask[];
}): JSX.Element {
  const { env, actions, tasks } = props;
  const [expanded, setExpanded] = useState(false);
  const running = tasks.filter(t => !isFinal(t));
  const changing = running.some(t => t.target === `environments/${env.name}`);
  const detailId = `jp-GpuEnv-env-${env.kind}-${env.name}-packages`;
  return (
    <ExpandableRow
      kind="env"
      data={{ name: env.name, kind: env.kind, kernel: env.kernel_name ?? '' }}
      expanded={expanded}
      onToggle={() => setExpanded(!expanded)}
      toggle={{
        title: expanded
          ? 'Hide the packages'
          : `Show the packages (${env.prefix})`,
        controls: detailId
      }}
      name={<span className="jp-GpuEnv-rowName">{env.name}</span>}
      nameInToggle
      header={
        <Actions
          env={env}
          actions={actions}
          commands={props.commands}
          changing={changing}
        />
      }
      details={
        <PackageList id={detailId} env={env} client={actions.model.client} />
      }
    >
      {env.kind === 'shared' && <SharedBy env={env} />}
      <div className="jp-GpuEnv-envMeta">{describeEnvironment(env)}</div>
      <Badges env={env} />
      <TaskList
        tasks={tasks}
        onCancel={id => void actions.cancel(id)}
        summarize={taskSummary}
      />
    </ExpandableRow>
  );
}
