/**
 * A sweep's results in the main area: its runs side by side (parameters,
 * recorded values, state, duration) in a table sorted by any column, a
 * chart of one recorded value against one parameter, the table as CSV, and
 * per run "Run again…". Asked again every few seconds while a run is queued
 * or running, and at once after a retry or a run sent again.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import {
  ReactWidget,
  ToolbarButton,
  downloadIcon,
  refreshIcon,
  tableRowsIcon
} from '@jupyterlab/ui-components';
import React from 'react';

import type { ISweepResults, ISweepRow } from '../../api/types';
import { StateBadge } from '../../components/figures/badge';
import { downloadUrl } from '../../components/download';
import { useSignals } from '../../components/hooks';
import {
  createMainAreaWidget,
  createStatusNode,
  ownedBy
} from '../../components/main-area';
import { PolledModel, TickPhase } from '../../components/polled';
import { ProgressBar } from '../../components/figures/progress';
import { JobsClient } from '../client';
import { isActiveState } from '../format';
import { endedRuns } from './row';
import { Chart } from './results-chart';
import { Table } from './results-table';
import { describeCounts, describeRuns } from './values';

/** Milliseconds between two requests while a run is active. */
export const RESULTS_INTERVAL = 3000;

/** Asks a sweep's results while it is active (and when refreshed). */
export class SweepResultsModel extends PolledModel {
  constructor(options: SweepResultsModel.IOptions) {
    super({
      name: `jupyter-gpu-env:sweep-results:${options.id}`,
      interval: options.interval ?? RESULTS_INTERVAL,
      maxBackoff: 30000,
      visible: options.visible
    });
    this.client = options.client;
    this.id = options.id;
  }

  readonly client: JobsClient;
  readonly id: string;

  /** The latest answer, or null before the first. */
  get results(): ISweepResults | null {
    return this._results;
  }

  /** Whether a run is queued or running (then the view refreshes). */
  get active(): boolean {
    return this._results === null || isActiveState(this._results.group.state);
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    // Once every run has ended, only refreshes ask.
    if (phase === 'resolved' && !this.active) {
      return false;
    }
    this._results = await this.client.sweepResults(this.id);
  }

  private _results: ISweepResults | null = null;
}

export namespace SweepResultsModel {
  export interface IOptions {
    client: JobsClient;
    id: string;
    interval?: number;
    visible?: () => boolean;
  }
}

function ResultsView(props: {
  model: SweepResultsModel;
  runAgain: (row: ISweepRow) => Promise<unknown>;
}): JSX.Element {
  const { model, runAgain } = props;
  useSignals([model.changed]);
  const { results, error } = model;
  if (!results) {
    return (
      <div className="jp-GpuEnv-sweepResults">
        {error ? (
          <div className="jp-GpuEnv-error" role="alert">
            Could not read the results: {error.message}
          </div>
        ) : (
          <div className="jp-GpuEnv-note">Reading the results…</div>
        )}
      </div>
    );
  }
  const { group: sweep } = results;
  const ended = endedRuns(sweep.counts);
  return (
    <div
      className="jp-GpuEnv-sweepResults"
      data-testid="gpu-env-sweep-results"
      data-state={sweep.state}
    >
      {error && (
        <div className="jp-GpuEnv-error" role="alert">
          Could not refresh the results: {error.message}
        </div>
      )}
      <div className="jp-GpuEnv-sweepSummaryLine">
        <StateBadge state={sweep.state} testId={null} />
        <strong>{sweep.name}</strong>
        <span className="jp-GpuEnv-note">
          {sweep.notebook_path} · {sweep.backend} ·{' '}
          {describeRuns(sweep.size, sweep.max_concurrent)}
        </span>
      </div>
      <div className="jp-GpuEnv-jobProgress">
        <ProgressBar
          percent={sweep.size ? (ended / sweep.size) * 100 : 0}
          level={sweep.counts.failed ? 'critical' : 'ok'}
          label={`Runs of ${sweep.name} ended`}
          valueNow={ended}
          valueMax={sweep.size || 1}
        />
        <span
          className="jp-GpuEnv-note"
          data-testid="gpu-env-sweep-results-counts"
        >
          {ended} of {sweep.size} runs ended
          {ended ? `: ${describeCounts(sweep.counts)}` : ''}
        </span>
      </div>
      <Chart results={results} />
      <Table results={results} runAgain={runAgain} />
    </div>
  );
}

/** The view inside the main-area widget. */
export class SweepResultsView extends ReactWidget {
  constructor(options: SweepResultsView.IOptions) {
    super();
    this.addClass('jp-GpuEnv-sweepResultsView');
    this.model = ownedBy(
      this,
      new SweepResultsModel({
        client: options.client,
        id: options.id,
        visible: () => this.isVisible
      })
    );
    this._runAgain = options.runAgain;
  }

  readonly model: SweepResultsModel;

  protected override onAfterShow(): void {
    void this.model.refresh().catch(() => undefined);
  }

  protected render(): JSX.Element {
    return <ResultsView model={this.model} runAgain={this._runAgain} />;
  }

  private _runAgain: (row: ISweepRow) => Promise<unknown>;
}

export namespace SweepResultsView {
  export interface IOptions {
    client: JobsClient;
    id: string;
    /** "Run again…" on a row: the dialog, filled from that run. */
    runAgain: (row: ISweepRow) => Promise<unknown>;
  }
}

/** A main-area widget with the results of the sweep `id`. */
export function createResultsWidget(options: {
  client: JobsClient;
  id: string;
  /** "Run again…" on a row: the dialog, filled from that run. */
  runAgain: (row: ISweepRow) => Promise<unknown>;
}): MainAreaWidget<SweepResultsView> {
  const { client, id } = options;
  const content = new SweepResultsView({
    client,
    id,
    runAgain: options.runAgain
  });
  const status = createStatusNode();
  const csv = new ToolbarButton({
    icon: downloadIcon,
    label: 'Download CSV',
    tooltip: 'Download the table as CSV (a row per run)',
    // Named by the server after the sweep.
    onClick: () => downloadUrl(client.sweepResultsCsvUrl(id))
  });
  csv.node.dataset.testid = 'gpu-env-sweep-csv';
  const refresh = new ToolbarButton({
    icon: refreshIcon,
    tooltip: 'Read the results again',
    onClick: () => void content.model.refresh().catch(() => undefined)
  });
  const widget = createMainAreaWidget({
    content,
    id: `jupyter-gpu-env-sweep-results-${id}`,
    label: 'Sweep results',
    caption: `The runs of sweep ${id} side by side`,
    icon: tableRowsIcon,
    items: [
      ['download-csv', csv],
      ['refresh', refresh]
    ],
    status
  });
  widget.addClass('jp-GpuEnv-sweepResultsWidget');
  content.model.changed.connect(() => {
    const results = content.model.results;
    if (results) {
      widget.title.label = `Results: ${results.group.name}`;
    }
    status.textContent = content.model.active
      ? 'Refreshing while runs are active…'
      : 'Every run has ended.';
  });
  return widget;
}
