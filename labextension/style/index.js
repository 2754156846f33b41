import './base.css';
import './environments.css';
import './jobs.css';
import './jobs-view.css';
import './gpu.css';
import './forms.css';
