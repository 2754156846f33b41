/**
 * A pipeline's graph in the main area: PipelineModel asks `GET
 * pipelines/{id}` every few seconds while it is queued or running and the
 * view is shown (backing off on errors, standing by while hidden), and only
 * on refreshes once it has ended. The toolbar has Cancel pipeline and
 * Refresh; what the server refuses (a rerun while a node below is active)
 * shows above the graph in its words.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import {
  ReactWidget,
  ToolbarButton,
  refreshIcon,
  stopIcon,
  treeViewIcon
} from '@jupyterlab/ui-components';
import React from 'react';

import { messageOf } from '../../api/request';
import type { IPipeline, IPipelineNode } from '../../api/types';
import { useNow, useSignals } from '../../components/hooks';
import {
  createMainAreaWidget,
  createStatusNode,
  ownedBy
} from '../../components/main-area';
import { PolledModel, TickPhase } from '../../components/polled';
import { StateBadge } from '../../components/figures/badge';
import { formatTime } from '../../jobs/format';
import { PipelinesClient } from '../client';
import { describeNodeCounts, isPipelineActive, nodesEnded } from '../format';
import { PipelineGraph } from './graph';

/** Milliseconds between two requests while the pipeline is active. */
export const PIPELINE_INTERVAL = 2000;

export class PipelineModel extends PolledModel {
  constructor(options: PipelineModel.IOptions) {
    super({
      name: `jupyter-gpu-env:pipeline:${options.id}`,
      interval: options.interval ?? PIPELINE_INTERVAL,
      maxBackoff: 30000,
      visible: options.visible
    });
    this.client = options.client;
    this.id = options.id;
    this._pipeline = options.pipeline ?? null;
  }

  readonly client: PipelinesClient;
  readonly id: string;

  /** The latest answer, or null before the first. */
  get pipeline(): IPipeline | null {
    return this._pipeline;
  }

  /** Whether it may still change on its own. */
  get active(): boolean {
    return this._pipeline === null || isPipelineActive(this._pipeline.state);
  }

  /** Whether a rerun or cancel is under way. */
  get busy(): boolean {
    return this.isBusy(this.id);
  }

  /** Why the last rerun or cancel was refused; null after a success. */
  get actionError(): string | null {
    return this._actionError;
  }

  /** Run `node` and everything below it again. */
  rerun(node: string): Promise<IPipeline | null> {
    return this._act(`Cannot run again from '${node}'`, () =>
      this.client.rerun(this.id, node)
    );
  }

  /** Cancel the pipeline (no confirmation here). */
  cancel(): Promise<IPipeline | null> {
    return this._act('Cannot cancel the pipeline', () =>
      this.client.cancel(this.id)
    );
  }

  /** An answer had elsewhere (a cancel from the Jobs section). */
  set(pipeline: IPipeline): void {
    this._pipeline = pipeline;
    this.emitChanged();
  }

  protected async fetch(phase: TickPhase): Promise<void | false> {
    // Once every node has ended, only refreshes ask.
    if (phase === 'resolved' && !this.active) {
      return false;
    }
    this._pipeline = await this.client.get(this.id);
  }

  private async _act(
    failure: string,
    action: () => Promise<IPipeline>
  ): Promise<IPipeline | null> {
    this._actionError = null;
    return this.busyWhile(
      this.id,
      async () => {
        try {
          this._pipeline = await action();
          return this._pipeline;
        } catch (error) {
          this._actionError = `${failure}: ${messageOf(error)}`;
          return null;
        }
      },
      false
    );
  }

  private _pipeline: IPipeline | null;
  private _actionError: string | null = null;
}

export namespace PipelineModel {
  export interface IOptions {
    client: PipelinesClient;
    id: string;
    /** What is known already (the answer of its submission). */
    pipeline?: IPipeline;
    interval?: number;
    visible?: () => boolean;
  }
}

function GraphView(props: {
  model: PipelineModel;
  onOpen: (node: IPipelineNode) => void;
}): JSX.Element {
  const { model, onOpen } = props;
  useSignals([model.changed]);
  const { pipeline, error, actionError } = model;
  const now = useNow(model.active);
  if (!pipeline) {
    return (
      <div className="jp-GpuEnv-pipelineView">
        {error ? (
          <div className="jp-GpuEnv-error" role="alert">
            Could not read the pipeline: {error.message}
          </div>
        ) : (
          <div className="jp-GpuEnv-note">Reading the pipeline…</div>
        )}
      </div>
    );
  }
  const { ended, total } = nodesEnded(pipeline);
  const counts = describeNodeCounts(pipeline.counts);
  return (
    <div
      className="jp-GpuEnv-pipelineView"
      data-testid="gpu-env-pipeline-view"
      data-state={pipeline.state}
    >
      <div className="jp-GpuEnv-sweepSummaryLine">
        <StateBadge state={pipeline.state} />
        <strong>{pipeline.name}</strong>
        <span className="jp-GpuEnv-note" data-testid="gpu-env-pipeline-counts">
          {ended} of {total} nodes ended{counts ? ` · ${counts}` : ''}
        </span>
        <span className="jp-GpuEnv-note">
          {pipeline.file_path ? `${pipeline.file_path} · ` : ''}
          submitted {formatTime(pipeline.created_at)}
        </span>
      </div>
      {error && (
        <div className="jp-GpuEnv-error" role="alert">
          Could not refresh the pipeline: {error.message}
        </div>
      )}
      {actionError && (
        <div
          className="jp-GpuEnv-error"
          role="alert"
          data-testid="gpu-env-pipeline-error"
        >
          {actionError}
        </div>
      )}
      <div className="jp-GpuEnv-pipelineScroller">
        <PipelineGraph
          pipeline={pipeline}
          now={now}
          busy={model.busy}
          onOpen={onOpen}
          onRerun={node => void model.rerun(node.id)}
        />
      </div>
    </div>
  );
}

/** The view inside the main-area widget; it owns its model. */
export class PipelineView extends ReactWidget {
  constructor(options: PipelineView.IOptions) {
    super();
    this.addClass('jp-GpuEnv-pipelineViewWidget');
    this.model = ownedBy(
      this,
      new PipelineModel({
        client: options.client,
        id: options.id,
        pipeline: options.pipeline,
        visible: () => this.isVisible
      })
    );
    this._onOpen = options.onOpen;
  }

  readonly model: PipelineModel;

  protected override onAfterShow(): void {
    void this.model.refresh().catch(() => undefined);
  }

  protected render(): JSX.Element {
    return <GraphView model={this.model} onOpen={this._onOpen} />;
  }

  private _onOpen: (node: IPipelineNode) => void;
}

export namespace PipelineView {
  export interface IOptions {
    client: PipelinesClient;
    id: string;
    pipeline?: IPipeline;
    /** Open what a node ran: its job's log, its sweep's results. */
    onOpen: (node: IPipelineNode) => void;
  }
}

/** A main-area widget with the graph of the pipeline `options.id`. */
export function createPipelineWidget(
  options: PipelineView.IOptions & {
    /** Cancel pipeline (asked first); resolves once done or declined. */
    cancel: (model: PipelineModel) => Promise<void>;
  }
): MainAreaWidget<PipelineView> {
  const content = new PipelineView(options);
  const { model } = content;
  const status = createStatusNode('gpu-env-pipeline-status');
  const cancel = new ToolbarButton({
    icon: stopIcon,
    label: 'Cancel pipeline',
    tooltip: 'Stop its running nodes and skip the rest',
    onClick: () => void options.cancel(model)
  });
  cancel.node.dataset.testid = 'gpu-env-pipeline-cancel';
  const refresh = new ToolbarButton({
    icon: refreshIcon,
    label: 'Refresh',
    tooltip: 'Ask how the pipeline stands now',
    onClick: () => void model.refresh().catch(() => undefined)
  });
  refresh.node.dataset.testid = 'gpu-env-pipeline-refresh';
  const widget = createMainAreaWidget({
    content,
    id: `jupyter-gpu-env-pipeline-${options.id}`,
    label: 'Pipeline',
    caption: `The graph of pipeline ${options.id}`,
    icon: treeViewIcon,
    items: [
      ['cancel-pipeline', cancel],
      ['refresh', refresh]
    ],
    status
  });
  widget.addClass('jp-GpuEnv-pipelineWidget');
  const update = (): void => {
    const { pipeline } = model;
    if (pipeline) {
      widget.title.label = `Pipeline: ${pipeline.name}`;
    }
    cancel.enabled = model.active && !model.busy;
    status.textContent = !pipeline
      ? ''
      : model.active
        ? 'Following the pipeline while it runs…'
        : `The pipeline ${pipeline.state}.`;
  };
  model.changed.connect(update);
  update();
  return widget;
}
