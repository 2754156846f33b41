/**
 * One environment in the Environments section: name, facts, badges, the
 * row's actions, its running tasks, and (expanded) its package list.
 */
import {
  ToolbarButtonComponent,
  caretDownIcon,
  deleteIcon,
  downloadIcon,
  duplicateIcon,
  editIcon,
  kernelIcon
} from '@jupyterlab/ui-components';
import React, { useState } from 'react';

import { packIcon } from '../components/icons';
import { ListRow } from '../components/row';
import { TaskList } from './task-list';
import { isFinal } from './tasks';
import { IEnvironment, ITask } from '../api/types';
import { EnvironmentActions } from './actions';
import { describeEnvironment } from './format';
import { taskSummary } from './notify';
import { PackageList } from './packages';

const NO_IPYKERNEL =
  'ipykernel is not installed in this environment, so it cannot run ' +
  'notebooks: add ipykernel with “Add or remove packages”.';

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
        <span className="jp-GpuEnv-note" title={env.source ?? undefined}>
          cloned from {env.source_name}
        </span>
      )}
    </div>
  );
}

function Actions(props: {
  env: IEnvironment;
  actions: EnvironmentActions;
  changing: boolean;
  packing: boolean;
}): JSX.Element {
  const { env, actions, changing, packing } = props;
  const own = env.kind === 'own';
  const registered = env.kernel_name !== null;
  const kernelTip = registered
    ? `Remove the kernel '${env.kernel_name}'`
    : env.has_ipykernel
      ? 'Register as a Jupyter kernel (shows in the Launcher)'
      : `Cannot register a kernel: ${NO_IPYKERNEL}`;
  return (
    <div className="jp-GpuEnv-rowActions" role="toolbar">
      {own && (
        <ToolbarButtonComponent
          icon={editIcon}
          tooltip="Add or remove packages"
          disabledTooltip="Busy: a change is running"
          enabled={!changing}
          dataset={{ action: 'packages' }}
          onClick={() => void actions.editPackages(env)}
        />
      )}
      <ToolbarButtonComponent
        icon={duplicateIcon}
        tooltip={`Clone '${env.name}' into your own environments`}
        dataset={{ action: 'clone' }}
        onClick={() => void actions.clone(env.name)}
      />
      <ToolbarButtonComponent
        icon={kernelIcon}
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
      <ToolbarButtonComponent
        icon={downloadIcon}
        tooltip="Export as environment.yml or an explicit lock"
        dataset={{ action: 'export' }}
        onClick={() => void actions.exportEnvironment(env)}
      />
      <ToolbarButtonComponent
        icon={packIcon}
        tooltip="Pack into one squashfs image (for Apptainer and batch jobs)"
        disabledTooltip="Being packed"
        enabled={!packing}
        dataset={{ action: 'pack' }}
        onClick={() => void actions.pack(env.name)}
      />
      {own ? (
        <ToolbarButtonComponent
          icon={deleteIcon}
          tooltip={`Delete '${env.name}'`}
          disabledTooltip="Busy: a change is running"
          enabled={!changing}
          dataset={{ action: 'delete' }}
          onClick={() => void actions.remove(env)}
        />
      ) : (
        // Managed environments cannot be deleted: an empty slot keeps the
        // other buttons in the same columns as on the user's rows.
        <ToolbarButtonComponent
          className="jp-GpuEnv-actionSlot"
          icon={deleteIcon}
          enabled={false}
        />
      )}
    </div>
  );
}

export function EnvironmentRow(props: {
  env: IEnvironment;
  actions: EnvironmentActions;
  /** The tasks working on this environment (changes, packs). */
  tasks: ITask[];
}): JSX.Element {
  const { env, actions, tasks } = props;
  const [expanded, setExpanded] = useState(false);
  const running = tasks.filter(t => !isFinal(t));
  const changing = running.some(t => t.target === `environments/${env.name}`);
  const packing = running.some(t => t.target === `images/${env.name}`);
  const detailId = `jp-GpuEnv-env-${env.kind}-${env.name}-packages`;
  return (
    <ListRow
      kind="env"
      data={{
        name: env.name,
        kind: env.kind,
        kernel: env.kernel_name ?? '',
        expanded
      }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <button
          type="button"
          className="jp-GpuEnv-envToggle"
          aria-expanded={expanded}
          aria-controls={detailId}
          title={
            expanded ? 'Hide the packages' : `Show the packages (${env.prefix})`
          }
          onClick={() => setExpanded(!expanded)}
        >
          <caretDownIcon.react tag="span" className="jp-GpuEnv-envCaret" />
          <span className="jp-GpuEnv-rowName">{env.name}</span>
        </button>
        <Actions
          env={env}
          actions={actions}
          changing={changing}
          packing={packing}
        />
      </div>
      <div className="jp-GpuEnv-envMeta">{describeEnvironment(env)}</div>
      <Badges env={env} />
      <TaskList
        tasks={tasks}
        onCancel={id => void actions.cancel(id)}
        summarize={taskSummary}
      />
      {expanded && (
        <PackageList id={detailId} env={env} client={actions.model.client} />
      )}
    </ListRow>
  );
}
