/**
 * The "Dask" section: each cluster a row with its name, its state, its
 * workers ("2 running · 1 pending", the pending ones' queue places in the
 * title), Dashboard, and a "⋯" menu (Scale…, Open dashboard, Insert client
 * into notebook, Shut down…).
 */
import { ToolbarButtonComponent, addIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import React from 'react';

import type { IDaskCluster } from '../api/types';
import { StateBadge } from '../components/figures/badge';
import { useSignals } from '../components/hooks';
import { daskIcon } from '../components/icons';
import { ListingStatus } from '../components/listing';
import { MenuButton } from '../components/menu-button';
import { ListRow } from '../components/row';
import { formatDuration } from '../components/format';
import { describeResources } from '../jobs/format';
import { SectionWidget } from '../sidebar/section-widget';
import { DaskCommandIDs } from './command-ids';
import { clusterMenu } from './commands';
import {
  DASK_TONES,
  describeLayout,
  describeWorkers,
  isLive,
  pendingTitle
} from './format';
import { DaskModel } from './model';

function ClusterRow(props: {
  cluster: IDaskCluster;
  commands: CommandRegistry;
}): JSX.Element {
  const { cluster, commands } = props;
  const { workers } = cluster;
  const args = { cluster: cluster.id };
  const asked = describeResources(cluster.resources);
  const facts = [
    cluster.backend + (cluster.queue ? ` · ${cluster.queue}` : ''),
    describeLayout(cluster),
    `each worker ${asked || 'the backend’s default'}, ${cluster.threads_per_worker} thread${cluster.threads_per_worker === 1 ? '' : 's'}`,
    `time limit ${formatDuration(cluster.walltime_seconds)}`
  ];
  const live = isLive(cluster);
  return (
    <ListRow
      kind="dask-cluster"
      data={{
        id: cluster.id,
        name: cluster.name,
        state: cluster.state,
        running: workers.running,
        pending: workers.pending
      }}
    >
      <div className="jp-GpuEnv-rowHeader">
        <span
          className="jp-GpuEnv-daskTitle"
          title={cluster.scheduler_address ?? ''}
        >
          <daskIcon.react tag="span" className="jp-GpuEnv-icon" />
          <span className="jp-GpuEnv-rowName">{cluster.name}</span>
        </span>
        <div className="jp-GpuEnv-rowActions" role="toolbar">
          {live && (
            <ToolbarButtonComponent
              label="Dashboard"
              tooltip="Open the cluster’s dashboard in a tab"
              enabled={!!cluster.dashboard}
              dataset={{ action: 'dashboard' }}
              onClick={() =>
                void commands.execute(DaskCommandIDs.dashboard, args)
              }
            />
          )}
          <MenuButton
            commands={commands}
            label={`Actions on the Dask cluster '${cluster.name}'`}
            entries={clusterMenu(cluster.id)}
          />
        </div>
      </div>
      <div className="jp-GpuEnv-envMeta">
        <StateBadge
          state={cluster.state}
          tone={DASK_TONES[cluster.state]}
          testId="gpu-env-dask-state"
        />
        {live && (
          <span
            className="jp-GpuEnv-daskWorkerCount"
            data-testid="gpu-env-dask-workers"
            title={pendingTitle(workers)}
          >
            {describeWorkers(workers, cluster.adapt)}
          </span>
        )}
      </div>
      <div className="jp-GpuEnv-note">{facts.join(' · ')}</div>
      {cluster.message && (
        <div
          className="jp-GpuEnv-note"
          data-testid="gpu-env-dask-message"
          data-tone={cluster.state === 'failed' ? 'error' : undefined}
        >
          {cluster.message}
        </div>
      )}
      {live && cluster.problems.length > 0 && (
        <div className="jp-GpuEnv-error" role="alert">
          {cluster.problems[cluster.problems.length - 1]}
        </div>
      )}
    </ListRow>
  );
}

export function DaskView(props: {
  model: DaskModel;
  commands: CommandRegistry;
}): JSX.Element {
  const { model, commands } = props;
  useSignals([model.changed]);
  const { clusters, error } = model;
  return (
    <div className="jp-GpuEnv-sectionBody" data-testid="gpu-env-dask">
      <div className="jp-GpuEnv-sectionActions">
        <ToolbarButtonComponent
          icon={addIcon}
          label="New cluster…"
          tooltip="Start a Dask scheduler and workers on a batch backend, in the notebook’s environment"
          dataset={{ action: 'new-cluster' }}
          onClick={() => void commands.execute(DaskCommandIDs.create)}
        />
      </div>
      <ListingStatus
        what="Dask clusters"
        error={error}
        pending={clusters === null}
      />
      {clusters?.length === 0 && (
        <div className="jp-GpuEnv-empty" data-testid="gpu-env-dask-empty">
          <daskIcon.react tag="span" className="jp-GpuEnv-icon" />
          <p>
            No Dask cluster yet. Start one to spread a notebook’s work over
            workers on the batch system: they run the notebook’s own
            environment, and the cluster outlives this page.
          </p>
        </div>
      )}
      {clusters && clusters.length > 0 && (
        <ul className="jp-GpuEnv-list" data-testid="gpu-env-dask-list">
          {clusters.map(cluster => (
            <ClusterRow
              key={cluster.id}
              cluster={cluster}
              commands={commands}
            />
          ))}
        </ul>
      )}
      {model.unlisted > 0 && (
        <div className="jp-GpuEnv-note">
          {model.unlisted} older clusters not shown (`jupyter gpu-env dask list`
          lists them all).
        </div>
      )}
    </div>
  );
}

/** The section widget; the list is refreshed whenever it is shown. */
export class DaskSection extends SectionWidget {
  constructor(
    private readonly _model: DaskModel,
    private readonly _commands: CommandRegistry
  ) {
    super('dask', 'Dask');
  }

  protected onShown(): void {
    void this._model.refresh();
  }

  protected render(): JSX.Element {
    return <DaskView model={this._model} commands={this._commands} />;
  }
}
