// /watch/{id}: the read-only wall-screen page for one session (filled in with the dashboards).
import './styles/app.css';
import { takeTokenFromFragment } from './lib/auth.js';
import { initTheme } from './lib/theme.js';

initTheme();
takeTokenFromFragment();
document.getElementById('app').textContent = 'The dashboard comes with the next milestone.';
