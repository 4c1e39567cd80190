"""The claims: the judge, the views it reads, the claims by subject, the claims table written out, the rivals."""
