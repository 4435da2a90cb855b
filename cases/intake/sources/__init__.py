"""Sources of ratings: small adapters that yield intake records (:mod:`goldboard.cases.intake.core`)."""
