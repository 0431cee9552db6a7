// The portal's progressive enhancement: every page works without it.
// - a button with data-copy="ID" copies the text of element ID (the once-shown key or secret);
// - a form with data-confirm="question" asks before it submits (revoke, remove, disable).
document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  });
});

document.addEventListener('submit', (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

for (const button of document.querySelectorAll('button[data-copy]')) button.hidden = false;

// A page that answered a form post (a key or secret shown once): a reload asks for the page again,
// rather than posting the form a second time.
if (document.querySelector('.secret')) history.replaceState(null, '', location.href);

// Live parts: an element with an id and data-refresh="5000" is fetched again every 5 s and swapped
// in place (the delivery log, while a test event or a retry is on its way). Paused in a hidden tab.
for (const live of document.querySelectorAll('[data-refresh][id]')) {
  const every = Math.max(2000, Number(live.dataset.refresh) || 5000);
  setInterval(async () => {
    if (document.hidden) return;
    const response = await fetch(location.href, { headers: { accept: 'text/html' } });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const fresh = page.getElementById(live.id);
    const current = document.getElementById(live.id);
    if (fresh && current && !current.contains(document.activeElement)) current.replaceWith(fresh);
  }, every);
}
