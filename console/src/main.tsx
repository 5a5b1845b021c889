/** The console's entry: renders the shell into the page's #app. */
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

const root = document.getElementById('app');
if (root !== null) {
  render(<App />, root);
  // The first page is on screen and answers input: what `npm run bench:console` reads as time to interactive.
  performance.mark('console:interactive');
}
