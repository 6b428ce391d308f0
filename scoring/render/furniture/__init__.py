"""Map furniture: scale bar, north arrow, attribute cards, legend, insets."""
