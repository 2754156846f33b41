/**
 * A cluster's dashboard in a main-area tab: an iframe of its status page,
 * served by this server (authenticated like the rest of the API), with
 * Reload and Open in browser in the toolbar.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import {
  IFrame,
  ToolbarButton,
  launchIcon,
  refreshIcon
} from '@jupyterlab/ui-components';

import type { IDaskCluster } from '../api/types';
import { daskIcon } from '../components/icons';
import {
  createMainAreaWidget,
  createStatusNode
} from '../components/main-area';

/** The tab's id for a cluster (one tab per cluster). */
export function dashboardId(clusterId: string): string {
  return `jupyter-gpu-env-dask-dashboard-${clusterId}`;
}

/** A new dashboard tab for `cluster`, showing `url`. */
export function createDashboard(
  cluster: IDaskCluster,
  url: string
): MainAreaWidget<IFrame> {
  // Bokeh's pages run scripts and open websockets to this same server.
  const frame = new IFrame({
    sandbox: [
      'allow-scripts',
      'allow-same-origin',
      'allow-popups',
      'allow-downloads'
    ]
  });
  frame.addClass('jp-GpuEnv-daskDashboard');
  frame.url = url;
  frame.node.querySelector('iframe')?.setAttribute('title', 'Dask dashboard');
  frame.node.dataset.testid = 'gpu-env-dask-dashboard';
  const status = createStatusNode('gpu-env-dask-dashboard-status');
  status.textContent = cluster.scheduler_address ?? '';
  const reload = new ToolbarButton({
    icon: refreshIcon,
    label: 'Reload',
    tooltip: 'Load the dashboard again',
    onClick: () => {
      frame.url = '';
      frame.url = url;
    }
  });
  const open = new ToolbarButton({
    icon: launchIcon,
    label: 'Open in browser',
    tooltip: 'Open the dashboard in a browser tab of its own',
    onClick: () => void window.open(url, '_blank', 'noopener')
  });
  return createMainAreaWidget({
    content: frame,
    id: dashboardId(cluster.id),
    label: `Dask: ${cluster.name}`,
    caption: `The dashboard of the Dask cluster '${cluster.name}' (${cluster.id})`,
    icon: daskIcon,
    items: [
      ['reload', reload],
      ['open-in-browser', open]
    ],
    status
  });
}
