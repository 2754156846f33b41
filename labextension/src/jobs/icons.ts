/**
 * The "Send to batch" icon, themed through JupyterLab's `jp-icon*` classes.
 */
import { LabIcon } from '@jupyterlab/ui-components';

// A paper plane leaving a stack of lines: the notebook sent to a queue.
const SEND_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M9 3.5 23 10 9 16.5l1.8-5.3L17 10l-6.2-1.2z"/>
    <path d="M1 13h6v2H1zm0 3.5h9v2H1zM1 20h12v2H1z"/>
  </g>
</svg>`;

/** Send a notebook to a batch backend (toolbar button and command). */
export const sendToBatchIcon = new LabIcon({
  name: 'jupyter-gpu-env:send-to-batch',
  svgstr: SEND_SVG
});
