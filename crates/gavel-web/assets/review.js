// The review queue's keys: each control with a data-key is pressed by its key
// (p/f, a/b/t, s); n goes to the note. Keys typed into a field stay there:
// Enter or Escape leaves the field (Enter never submits a label by itself).
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const field = event.target.closest && event.target.closest('input, textarea, select');
  if (field) {
    if (event.key === 'Enter' || event.key === 'Escape') {
      event.preventDefault();
      field.blur();
    }
    return;
  }
  if (event.key === 'n') {
    const note = document.getElementById('f-note');
    if (note) {
      event.preventDefault();
      note.focus();
    }
    return;
  }
  const control = document.querySelector(`[data-key="${CSS.escape(event.key)}"]`);
  if (control) {
    event.preventDefault();
    control.click();
  }
});
