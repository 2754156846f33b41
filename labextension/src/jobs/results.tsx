/**
 * A sweep's results in the main area: its runs side by side (parameters,
 * recorded values, state, duration) in a table sorted by any column, a
 * chart of one recorded value against one parameter, the table as CSV, and
 * per run "Run with these parameters". Asked again every few seconds while
 * a run is queued or running.
 */
import { MainAreaWidget, Notification } from '@jupyterlab/apputils';
import {
  ReactWidget,
  Toolbar,
  ToolbarButton,
  ToolbarButtonComponent,
  downloadIcon,
  refreshIcon,
  runIcon,
  tableRowsIcon
} from '@jupyterlab/ui-components';
import type { JSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';
import React, { useState } from 'react';

import { messageOf } from '../api/request';
import type { IJob, ISweepResults, ISweepRow } from '../api/types';
import { downloadUrl } from '../components/download';
import { useSignals } from '../components/hooks';
import { PolledModel, TickPhase } from '../components/polled';
import { ProgressBar } from '../components/progress';
import { JobsClient } from './client';
import { formatClock, isActiveState } from './format';
import { endedRuns } from './group-row';
import { TONES } from './row';
import { describeRuns, formatValue } from './sweep';

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
    this._results = await this.client.groupResults(this.id);
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

/** A column of the table: a parameter, a recorded value, or a fact. */
interface IColumn {
  key: string;
  label: string;
  kind: 'parameter' | 'value' | 'state' | 'duration';
  get: (row: ISweepRow) => unknown;
}

function columnsOf(results: ISweepResults): IColumn[] {
  return [
    ...results.parameter_columns.map((name): IColumn => ({
      key: `p:${name}`,
      label: name,
      kind: 'parameter',
      get: row => row.parameters[name]
    })),
    ...results.value_columns.map((name): IColumn => ({
      key: `v:${name}`,
      label: name,
      kind: 'value',
      get: row => row.values[name]
    })),
    { key: 'state', label: 'state', kind: 'state', get: row => row.state },
    {
      key: 'duration',
      label: 'duration',
      kind: 'duration',
      get: row => row.duration_seconds
    }
  ];
}

/** Numbers before text before the rest; missing values always last. */
export function compareValues(a: unknown, b: unknown): number {
  const missing = (v: unknown): boolean => v === undefined || v === null;
  if (missing(a) || missing(b)) {
    return missing(a) === missing(b) ? 0 : missing(a) ? 1 : -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  const rank = (v: unknown): number =>
    typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2;
  if (rank(a) !== rank(b)) {
    return rank(a) - rank(b);
  }
  const text = (v: unknown): string =>
    typeof v === 'string' ? v : JSON.stringify(v);
  return text(a).localeCompare(text(b), undefined, { numeric: true });
}

interface ISort {
  key: string;
  descending: boolean;
}

function sortRows(
  rows: ISweepRow[],
  columns: IColumn[],
  sort: ISort | null
): ISweepRow[] {
  const column = sort && columns.find(c => c.key === sort.key);
  if (!sort || !column) {
    return rows;
  }
  const missing = (v: unknown): boolean => v === undefined || v === null;
  return [...rows].sort((a, b) => {
    const x = column.get(a);
    const y = column.get(b);
    if (missing(x) || missing(y)) {
      // Missing values stay last whichever way.
      return compareValues(x, y) || a.index - b.index;
    }
    const order = compareValues(x, y);
    return (sort.descending ? -order : order) || a.index - b.index;
  });
}

function Cell(props: { column: IColumn; row: ISweepRow }): JSX.Element {
  const { column, row } = props;
  const value = column.get(row);
  if (column.kind === 'state') {
    return (
      <td data-column={column.key}>
        <span className="jp-GpuEnv-badge" data-tone={TONES[row.state]}>
          {row.state}
        </span>
      </td>
    );
  }
  if (column.kind === 'duration') {
    return (
      <td data-column={column.key} className="jp-GpuEnv-sweepNumber">
        {row.duration_seconds === null ? '' : formatClock(row.duration_seconds)}
      </td>
    );
  }
  const missing = value === undefined || value === null;
  return (
    <td
      data-column={column.key}
      data-value={missing ? undefined : JSON.stringify(value)}
      className={typeof value === 'number' ? 'jp-GpuEnv-sweepNumber' : ''}
      title={missing ? undefined : JSON.stringify(value, null, 1)}
    >
      {missing ? '' : formatValue(value)}
    </td>
  );
}

function Table(props: {
  results: ISweepResults;
  onRerun: (row: ISweepRow) => Promise<void>;
}): JSX.Element {
  const { results, onRerun } = props;
  const [sort, setSort] = useState<ISort | null>(null);
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const columns = columnsOf(results);
  const rows = sortRows(results.rows, columns, sort);
  const toggle = (key: string): void =>
    setSort(
      sort?.key === key
        ? { key, descending: !sort.descending }
        : { key, descending: false }
    );
  const rerun = async (row: ISweepRow): Promise<void> => {
    setBusy(new Set(busy).add(row.job_id));
    try {
      await onRerun(row);
    } finally {
      setBusy(current => {
        const next = new Set(current);
        next.delete(row.job_id);
        return next;
      });
    }
  };
  return (
    <div className="jp-GpuEnv-sweepTableBox">
      <table className="jp-GpuEnv-sweepTable" data-testid="gpu-env-sweep-table">
        <thead>
          <tr>
            <th className="jp-GpuEnv-sweepIndex">#</th>
            {columns.map(column => {
              const sorted = sort?.key === column.key;
              return (
                <th
                  key={column.key}
                  data-column={column.key}
                  data-kind={column.kind}
                  aria-sort={
                    sorted
                      ? sort.descending
                        ? 'descending'
                        : 'ascending'
                      : 'none'
                  }
                >
                  <button
                    type="button"
                    title={`Sort by ${column.label}${sorted && !sort.descending ? ', descending' : ''}`}
                    onClick={() => toggle(column.key)}
                  >
                    {column.label}
                    <span className="jp-GpuEnv-sortMark" aria-hidden="true">
                      {sorted ? (sort.descending ? ' ▼' : ' ▲') : ''}
                    </span>
                  </button>
                </th>
              );
            })}
            <th>
              <span className="jp-GpuEnv-visuallyHidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(row => (
            <tr
              key={row.job_id}
              data-testid="gpu-env-sweep-row"
              data-index={row.index}
              data-job-id={row.job_id}
              data-state={row.state}
            >
              <td className="jp-GpuEnv-sweepIndex">{row.index + 1}</td>
              {columns.map(column => (
                <Cell key={column.key} column={column} row={row} />
              ))}
              <td className="jp-GpuEnv-sweepActions">
                <ToolbarButtonComponent
                  icon={runIcon}
                  tooltip="Run with these parameters"
                  disabledTooltip="Sending…"
                  aria-label="Run with these parameters"
                  enabled={!busy.has(row.job_id)}
                  dataset={{ action: 'rerun' }}
                  onClick={() => void rerun(row)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Round, readable steps between `min` and `max` (about `count`). */
export function ticks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) {
    return [min];
  }
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step =
    [1, 2, 2.5, 5, 10].map(f => f * power).find(s => s >= raw) ?? raw;
  const result: number[] = [];
  for (
    let v = Math.ceil(min / step) * step;
    v <= max + step * 1e-9;
    v += step
  ) {
    result.push(Number(v.toPrecision(12)));
  }
  return result;
}

const WIDTH = 520;
const HEIGHT = 260;
const MARGIN = { top: 12, right: 16, bottom: 40, left: 56 };

/** One recorded value against one parameter, as points (and a line). */
function Chart(props: { results: ISweepResults }): JSX.Element | null {
  const { results } = props;
  const numeric = results.value_columns.filter(name =>
    results.rows.some(row => typeof row.values[name] === 'number')
  );
  const [xName, setX] = useState<string>(results.parameter_columns[0] ?? '');
  const [yName, setY] = useState<string>(numeric[0] ?? '');
  const x = results.parameter_columns.includes(xName)
    ? xName
    : (results.parameter_columns[0] ?? '');
  const y = numeric.includes(yName) ? yName : (numeric[0] ?? '');
  if (!x || !y) {
    return (
      <div className="jp-GpuEnv-note" data-testid="gpu-env-sweep-chart">
        {results.value_columns.length === 0
          ? 'No run has recorded a value yet. A run records the dict of a ' +
            'code cell tagged “results” (its last expression) and the ' +
            'values glued with scrapbook.'
          : 'No recorded value is a number: nothing to chart.'}
      </div>
    );
  }
  const points = results.rows
    .filter(row => typeof row.values[y] === 'number')
    .map(row => ({ row, px: row.parameters[x], py: row.values[y] as number }));
  const xNumeric = points.every(p => typeof p.px === 'number');
  const categories = xNumeric
    ? []
    : [...new Set(points.map(p => formatValue(p.px)))];
  const xs = points.map(p => p.px as number);
  const ys = points.map(p => p.py);
  const [xMin, xMax] = xNumeric
    ? [Math.min(...xs), Math.max(...xs)]
    : [0, Math.max(1, categories.length - 1)];
  const [yMin, yMax] = [Math.min(...ys), Math.max(...ys)];
  const innerW = WIDTH - MARGIN.left - MARGIN.right;
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const pad = (lo: number, hi: number): [number, number] =>
    hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  const [x0, x1] = xNumeric ? pad(xMin, xMax) : [-0.5, xMax + 0.5];
  const [y0, y1] = pad(yMin, yMax);
  const sx = (v: number): number =>
    MARGIN.left + ((v - x0) / (x1 - x0)) * innerW;
  const sy = (v: number): number =>
    MARGIN.top + innerH - ((v - y0) / (y1 - y0)) * innerH;
  const xOf = (p: (typeof points)[number]): number =>
    xNumeric ? (p.px as number) : categories.indexOf(formatValue(p.px));
  // A line where each x has one point (one parameter varied).
  const unique = new Set(points.map(xOf)).size === points.length;
  const line = unique
    ? [...points]
        .sort((a, b) => xOf(a) - xOf(b))
        .map(p => `${sx(xOf(p)).toFixed(1)},${sy(p.py).toFixed(1)}`)
        .join(' ')
    : '';
  const xTicks = xNumeric ? ticks(x0, x1) : categories.map((_, i) => i);
  const yTicks = ticks(y0, y1);
  return (
    <div className="jp-GpuEnv-sweepChart" data-testid="gpu-env-sweep-chart">
      <div className="jp-GpuEnv-sweepChartControls">
        <label>
          Value{' '}
          <select
            className="jp-mod-styled"
            value={y}
            data-testid="gpu-env-sweep-chart-y"
            onChange={event => setY(event.target.value)}
          >
            {numeric.map(name => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          against{' '}
          <select
            className="jp-mod-styled"
            value={x}
            data-testid="gpu-env-sweep-chart-x"
            onChange={event => setX(event.target.value)}
          >
            {results.parameter_columns.map(name => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${y} against ${x}`}
      >
        <g className="jp-GpuEnv-chartGrid">
          {yTicks.map(t => (
            <g key={`y${t}`}>
              <line
                x1={MARGIN.left}
                x2={WIDTH - MARGIN.right}
                y1={sy(t)}
                y2={sy(t)}
              />
              <text
                x={MARGIN.left - 6}
                y={sy(t)}
                textAnchor="end"
                dominantBaseline="middle"
              >
                {formatValue(t)}
              </text>
            </g>
          ))}
          {xTicks.map(t => (
            <text
              key={`x${t}`}
              x={sx(t)}
              y={HEIGHT - MARGIN.bottom + 14}
              textAnchor="middle"
            >
              {xNumeric ? formatValue(t) : categories[t]}
            </text>
          ))}
        </g>
        <line
          className="jp-GpuEnv-chartAxis"
          x1={MARGIN.left}
          x2={WIDTH - MARGIN.right}
          y1={MARGIN.top + innerH}
          y2={MARGIN.top + innerH}
        />
        <text
          className="jp-GpuEnv-chartLabel"
          x={MARGIN.left + innerW / 2}
          y={HEIGHT - 6}
          textAnchor="middle"
        >
          {x}
        </text>
        {line && <polyline className="jp-GpuEnv-chartLine" points={line} />}
        {points.map(p => (
          <circle
            key={p.row.job_id}
            className="jp-GpuEnv-chartPoint"
            cx={sx(xOf(p))}
            cy={sy(p.py)}
            r={4}
            data-state={p.row.state}
          >
            <title>{`${x}=${formatValue(p.px)}: ${y}=${formatValue(p.py)} (run ${p.row.index + 1})`}</title>
          </circle>
        ))}
      </svg>
    </div>
  );
}

function ResultsView(props: {
  model: SweepResultsModel;
  onRerun: (row: ISweepRow) => Promise<void>;
}): JSX.Element {
  const { model, onRerun } = props;
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
  const { group } = results;
  const ended = endedRuns(group.counts);
  return (
    <div
      className="jp-GpuEnv-sweepResults"
      data-testid="gpu-env-sweep-results"
      data-state={group.state}
    >
      {error && (
        <div className="jp-GpuEnv-error" role="alert">
          Could not refresh the results: {error.message}
        </div>
      )}
      <div className="jp-GpuEnv-sweepSummaryLine">
        <span className="jp-GpuEnv-badge" data-tone={TONES[group.state]}>
          {group.state}
        </span>
        <strong>{group.name}</strong>
        <span className="jp-GpuEnv-note">
          {group.notebook_path} · {group.backend} ·{' '}
          {describeRuns(group.size, group.max_concurrent)}
        </span>
      </div>
      <div className="jp-GpuEnv-jobProgress">
        <ProgressBar
          percent={group.size ? (ended / group.size) * 100 : 0}
          level={group.counts.failed ? 'critical' : 'ok'}
          label={`Runs of ${group.name} ended`}
          valueNow={ended}
          valueMax={group.size || 1}
        />
        <span className="jp-GpuEnv-note">
          {ended} of {group.size} runs ended
        </span>
      </div>
      <Chart results={results} />
      <Table results={results} onRerun={onRerun} />
    </div>
  );
}

/** The view inside the main-area widget. */
export class SweepResultsView extends ReactWidget {
  constructor(options: SweepResultsView.IOptions) {
    super();
    this.addClass('jp-GpuEnv-sweepResultsView');
    this.model = new SweepResultsModel({
      client: options.client,
      id: options.id,
      visible: () => this.isVisible
    });
    this._onRerun = options.onRerun;
  }

  readonly model: SweepResultsModel;

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.dispose();
    super.dispose();
  }

  protected override onAfterShow(): void {
    void this.model.refresh().catch(() => undefined);
  }

  protected render(): JSX.Element {
    return <ResultsView model={this.model} onRerun={this._onRerun} />;
  }

  private _onRerun: (row: ISweepRow) => Promise<void>;
}

export namespace SweepResultsView {
  export interface IOptions {
    client: JobsClient;
    id: string;
    onRerun: (row: ISweepRow) => Promise<void>;
  }
}

/** A main-area widget with the results of the sweep `id`. */
export function createResultsWidget(options: {
  client: JobsClient;
  id: string;
  /** Called with a run sent again from a row. */
  onRerun: (job: IJob) => void;
}): MainAreaWidget<SweepResultsView> {
  const { client, id } = options;
  const content = new SweepResultsView({
    client,
    id,
    onRerun: async row => {
      try {
        const job = await client.rerun(
          row.job_id,
          row.parameters as JSONObject
        );
        options.onRerun(job);
      } catch (error) {
        Notification.error(
          `Could not run ${row.job_id} again: ${messageOf(error)}`
        );
      }
    }
  });
  const widget = new MainAreaWidget({ content });
  widget.id = `jupyter-gpu-env-sweep-results-${id}`;
  widget.title.label = 'Sweep results';
  widget.title.caption = `The runs of sweep ${id} side by side`;
  widget.title.icon = tableRowsIcon;
  widget.title.closable = true;
  widget.addClass('jp-GpuEnv-sweepResultsWidget');
  const status = document.createElement('span');
  status.className = 'jp-GpuEnv-jobLogStatus';
  status.setAttribute('role', 'status');
  const csv = new ToolbarButton({
    icon: downloadIcon,
    label: 'Download CSV',
    tooltip: 'Download the table as CSV (a row per run)',
    onClick: () => downloadUrl(client.groupResultsCsvUrl(id), `sweep-${id}.csv`)
  });
  csv.node.dataset.testid = 'gpu-env-sweep-csv';
  widget.toolbar.addItem('download-csv', csv);
  widget.toolbar.addItem(
    'refresh',
    new ToolbarButton({
      icon: refreshIcon,
      tooltip: 'Read the results again',
      onClick: () => void content.model.refresh().catch(() => undefined)
    })
  );
  widget.toolbar.addItem('spacer', Toolbar.createSpacerItem());
  widget.toolbar.addItem('status', new Widget({ node: status }));
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
