/** The ids of the Dask commands (the section's buttons, menus and palette). */
export namespace DaskCommandIDs {
  /** "Dask: new cluster…": the dialog, environment from the notebook. */
  export const create = 'jupyter-gpu-env:dask-new-cluster';
  /** Open a cluster's dashboard in a main-area tab (`{ cluster }`). */
  export const dashboard = 'jupyter-gpu-env:dask-dashboard';
  /** Change a cluster's workers (`{ cluster }`). */
  export const scale = 'jupyter-gpu-env:dask-scale';
  /** Add a cell connecting a Client at the top of the notebook. */
  export const insertClient = 'jupyter-gpu-env:dask-insert-client';
  /** Shut a cluster down after a confirmation (`{ cluster }`). */
  export const shutdown = 'jupyter-gpu-env:dask-shutdown';
}
