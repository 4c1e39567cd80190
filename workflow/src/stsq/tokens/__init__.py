"""Index lookup and bounded Dyck (Bhattamishra, Hahn, Blunsom, Kanade, NeurIPS 2024; docs/separations.md): their
tasks, and the one-layer transformer and the recurrent net that learn them."""
