"""Model objects to text: Kafka-compatible dump lines, JSON Lines, Rich tables. No parsing here."""
