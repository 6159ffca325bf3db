/// The quote domain.
public enum QuoteCoreModule {}
