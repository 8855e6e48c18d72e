import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { preloadPageAt } from './routes.ts';
import { SessionProvider } from './session.tsx';
import './styles.css';

// The opened page's code first (its own chunk), so its first render shows it rather than a fallback.
void preloadPageAt(window.location.pathname).then(() =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <SessionProvider>
        <App />
      </SessionProvider>
    </StrictMode>,
  ),
);
