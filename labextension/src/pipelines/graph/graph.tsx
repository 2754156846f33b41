/**
 * A pipeline drawn as a graph: each node a focusable box (its name, state
 * badge, progress, duration, attempts, and why it waits or was skipped),
 * edges from parents to children as SVG paths, laid out by dagre
 * (layout.ts). Clicking a box or pressing Enter on it opens what the node
 * ran; its "Re-run from here" button runs it and all below it again.
 */
import { ToolbarButtonComponent, refreshIcon } from '@jupyterlab/ui-components';
import React, { useMemo } from 'react';

import type { IPipeline, IPipelineNode } from '../../api/types';
import { StateBadge } from '../../components/figures/badge';
import { ProgressBar } from '../../components/figures/progress';
import { LEVELS } from '../../jobs/row';
import {
  describeKind,
  isNodeActive,
  nodeDuration,
  nodeProgress
} from '../format';
import { edgePath, layoutGraph } from './layout';

/** Every box's size in pixels. */
export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 104;

export interface IGraphProps {
  pipeline: IPipeline;
  /** Unix seconds, for the durations of running nodes. */
  now: number;
  /** Open what the node ran (its log, its sweep's results). */
  onOpen: (node: IPipelineNode) => void;
  /** "Re-run from here". */
  onRerun: (node: IPipelineNode) => void;
  /** Whether a rerun or cancel is under way (the buttons wait). */
  busy: boolean;
}

/** Whether the node has something to open yet. */
export function canOpen(node: IPipelineNode): boolean {
  return node.kind === 'sweep' ? node.group_id !== null : node.job_id !== null;
}

function NodeBox(props: {
  node: IPipelineNode;
  style: React.CSSProperties;
  now: number;
  busy: boolean;
  onOpen: (node: IPipelineNode) => void;
  onRerun: (node: IPipelineNode) => void;
}): JSX.Element {
  const { node, style, now, busy, onOpen, onRerun } = props;
  const progress = nodeProgress(node);
  const duration = nodeDuration(node, now);
  const openable = canOpen(node);
  const what = node.kind === 'sweep' ? "the sweep's results" : "the job's log";
  const tooltip = [
    node.message,
    describeKind(node),
    openable ? `Click or press Enter to open ${what}.` : 'Not sent yet.'
  ]
    .filter(Boolean)
    .join('\n');
  const rerunnable = node.kind !== 'external' && !isNodeActive(node.state);
  const open = (): void => {
    if (openable) {
      onOpen(node);
    }
  };
  return (
    <div
      className="jp-GpuEnv-pipelineNode"
      style={style}
      role="button"
      tabIndex={0}
      title={tooltip}
      aria-label={`${node.name}: ${node.state}${node.message ? `. ${node.message}` : ''}`}
      aria-disabled={!openable}
      data-testid="gpu-env-pipeline-node"
      data-node={node.id}
      data-kind={node.kind}
      data-state={node.state}
      data-attempts={node.attempts}
      onClick={open}
      onKeyDown={event => {
        if (event.target === event.currentTarget && event.key === 'Enter') {
          event.preventDefault();
          open();
        }
      }}
    >
      <div className="jp-GpuEnv-pipelineNodeHeader">
        <span className="jp-GpuEnv-pipelineNodeName">{node.name}</span>
        {node.kind !== 'job' && (
          <span className="jp-GpuEnv-pipelineNodeKind">{node.kind}</span>
        )}
        {rerunnable && (
          <span
            className="jp-GpuEnv-pipelineNodeActions"
            onClick={event => event.stopPropagation()}
            onKeyDown={event => event.stopPropagation()}
          >
            <ToolbarButtonComponent
              icon={refreshIcon}
              tooltip="Re-run from here: this node and everything below it"
              aria-label={`Re-run from ${node.name}`}
              enabled={!busy}
              dataset={{ action: 'rerun' }}
              onClick={() => onRerun(node)}
            />
          </span>
        )}
      </div>
      <div className="jp-GpuEnv-pipelineNodeStatus">
        <StateBadge state={node.state} testId="gpu-env-pipeline-node-state" />
        {duration && (
          <span
            className="jp-GpuEnv-note"
            data-testid="gpu-env-pipeline-node-duration"
          >
            {duration}
          </span>
        )}
        {node.attempts > 1 && (
          <span
            className="jp-GpuEnv-note"
            title={`Sent ${node.attempts} times`}
            data-testid="gpu-env-pipeline-node-attempts"
          >
            attempt {node.attempts}
          </span>
        )}
      </div>
      {progress && (
        <div className="jp-GpuEnv-jobProgress">
          <ProgressBar
            percent={
              progress.fraction === null ? null : progress.fraction * 100
            }
            level={LEVELS[node.state as keyof typeof LEVELS] ?? 'ok'}
            label={`Progress of ${node.name}`}
          />
          <span
            className="jp-GpuEnv-note"
            data-testid="gpu-env-pipeline-node-progress"
          >
            {progress.text}
          </span>
        </div>
      )}
      {node.message && (
        <div
          className="jp-GpuEnv-note jp-GpuEnv-pipelineNodeMessage"
          data-testid="gpu-env-pipeline-node-message"
        >
          {node.message}
        </div>
      )}
    </div>
  );
}

export function PipelineGraph(props: IGraphProps): JSX.Element {
  const { pipeline, now, busy, onOpen, onRerun } = props;
  const { nodes } = pipeline;
  // Laid out again only when the graph's shape changes, not its states.
  const shape = nodes.map(n => `${n.id}<${n.after.join(',')}`).join(';');
  const laid = useMemo(
    () =>
      layoutGraph(nodes, { nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT }),
    [shape]
  );
  const byId = new Map(nodes.map(node => [node.id, node]));
  const marker = `jp-GpuEnv-pipelineArrow-${pipeline.id}`;
  return (
    <div
      className="jp-GpuEnv-pipelineGraph"
      style={{ width: laid.width, height: laid.height }}
      data-testid="gpu-env-pipeline-graph"
    >
      <svg
        className="jp-GpuEnv-pipelineEdges"
        width={laid.width}
        height={laid.height}
        aria-hidden="true"
      >
        <defs>
          <marker
            id={marker}
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="8"
            markerHeight="8"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" />
          </marker>
        </defs>
        {laid.edges.map(edge => (
          <path
            key={`${edge.from}->${edge.to}`}
            d={edgePath(edge.points)}
            markerEnd={`url(#${marker})`}
            data-testid="gpu-env-pipeline-edge"
            data-from={edge.from}
            data-to={edge.to}
            data-state={byId.get(edge.from)?.state}
          />
        ))}
      </svg>
      {laid.boxes.map(box => {
        const node = byId.get(box.id);
        return node ? (
          <NodeBox
            key={box.id}
            node={node}
            now={now}
            busy={busy}
            onOpen={onOpen}
            onRerun={onRerun}
            style={{
              left: box.x,
              top: box.y,
              width: box.width,
              height: box.height
            }}
          />
        ) : null;
      })}
    </div>
  );
}
