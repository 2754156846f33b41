/**
 * The Jobs section's "Batch kernels" group (through `IJobsRegistry`): each
 * registered batch kernel's name as the Launcher shows it, where it runs,
 * its kernels now (each notebook with where its kernel stands), "New
 * notebook" and a "⋯" menu (Remove…). Nothing while none is registered.
 */
import {
  ToolbarButtonComponent,
  notebookIcon
} from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import type { IBatchKernel } from '../api/types';
import { useSignals } from '../components/hooks';
import { MenuButton } from '../components/menu-button';
import { ListRow } from '../components/row';
import { BatchKernelCommandIDs, batchKernelMenu } from './commands';
import { BatchKernelsModel } from './model';
import { describeSessions, sessionDetail, sessionWords } from './values';

function BatchKernelRow(props: {
  kernel: IBatchKernel;
  commands: CommandRegistry;
  busy: boolean;
  now: number;
}): JSX.Element {
  const { kernel, commands, busy, now } = props;
  const name = kernel.kernel_name;
  const live = kernel.sessions.filter(session => session.state !== 'ended');
  return (
    <ListRow kind="batch-kernel" data={{ name, busy: busy ? 'true' : 'false' }}>
      <div className="jp-GpuEnv-rowHeader">
        <span className="jp-GpuEnv-rowName" title={name}>
          {kernel.display_name}
        </span>
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          <ToolbarButtonComponent
            icon={notebookIcon}
            tooltip="New notebook with this kernel"
            dataset={{ action: 'new-notebook' }}
            onClick={() =>
              void commands.execute(BatchKernelCommandIDs.newNotebook, {
                kernel_name: name
              })
            }
          />
          <MenuButton
            commands={commands}
            label={`Actions on the batch kernel '${kernel.display_name}'`}
            entries={batchKernelMenu(name)}
          />
        </div>
      </div>
      <div className="jp-GpuEnv-note" data-testid="gpu-env-batch-kernel-where">
        {kernel.where} · {describeSessions(kernel.sessions)}
      </div>
      {live.length > 0 && (
        <ul className="jp-GpuEnv-batchSessions">
          {live.map(session => (
            <li
              key={session.kernel_id}
              className="jp-GpuEnv-note"
              data-state={session.state}
              data-testid="gpu-env-batch-kernel-session"
              title={sessionDetail(session, now) || undefined}
            >
              {session.notebook_path || 'a kernel'}:{' '}
              {sessionWords(session, now)}
            </li>
          ))}
        </ul>
      )}
    </ListRow>
  );
}

/** The batch kernels, above the jobs; nothing while none is registered. */
export function BatchKernelsGroup(props: {
  model: BatchKernelsModel;
  commands: CommandRegistry;
  now: number;
}): JSX.Element | null {
  const { model, commands, now } = props;
  useSignals([model.changed]);
  const kernels = model.kernels;
  if (!kernels?.length) {
    return null;
  }
  return (
    <div className="jp-GpuEnv-batchKernels" data-testid="gpu-env-batch-kernels">
      <h3 className="jp-GpuEnv-groupTitle">Batch kernels ({kernels.length})</h3>
      <ul className="jp-GpuEnv-list">
        {kernels.map(kernel => (
          <BatchKernelRow
            key={kernel.kernel_name}
            kernel={kernel}
            commands={commands}
            busy={model.isBusy(kernel.kernel_name)}
            now={now}
          />
        ))}
      </ul>
      {model.error && (
        <div className="jp-GpuEnv-note" data-level="error">
          Could not list the batch kernels again: {model.error.message}
        </div>
      )}
    </div>
  );
}
