/**
 * Memory over the last minutes: host memory against its limit, and the GPU
 * memory of what this server holds (its MIG slice, or its GPUs).
 */
import { UseSignal } from '@jupyterlab/ui-components';
import React from 'react';

import {
  HeldDevice,
  heldMemory,
  heldSeries,
  hostSeries
} from '../held/devices';
import { GpuHistoryModel } from './model';
import { Sparkline } from './sparkline';

function HistoryCharts(props: {
  model: GpuHistoryModel;
  held: HeldDevice[];
}): JSX.Element | null {
  const history = props.model.history;
  if (!history || history.points.length === 0) {
    return null;
  }
  const { points } = history;
  const hostLimit = points[points.length - 1].host_memory_limit_bytes;
  const gpuMemory = heldMemory(props.held);
  const gpuPoints = gpuMemory ? heldSeries(points, props.held) : [];
  const slices = props.held.every(d => d.kind === 'mig');
  return (
    <div className="jp-GpuEnv-group" data-testid="gpu-env-history">
      <h3 className="jp-GpuEnv-groupTitle">Memory history</h3>
      {gpuMemory && gpuPoints.length > 0 && (
        <Sparkline
          label={slices ? 'MIG slice memory' : 'GPU memory'}
          points={gpuPoints}
          limit={gpuMemory.total}
          testId="gpu-env-spark-gpu"
        />
      )}
      <Sparkline
        label="Host memory"
        points={hostSeries(points)}
        limit={hostLimit}
        testId="gpu-env-spark-host"
      />
    </div>
  );
}

export function MemoryHistory(props: {
  model: GpuHistoryModel;
  held: HeldDevice[];
}): JSX.Element {
  return (
    <UseSignal signal={props.model.changed}>
      {() => <HistoryCharts model={props.model} held={props.held} />}
    </UseSignal>
  );
}
