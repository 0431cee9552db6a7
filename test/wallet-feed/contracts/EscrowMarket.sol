// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC721Transfer {
    function transferFrom(address from, address to, uint256 tokenId) external;
}

/// A marketplace that holds listed tokens in escrow until they are bought or the listing is cancelled.
contract EscrowMarket {
    struct Listing {
        address seller;
        uint256 price;
    }

    event Listed(address indexed collection, uint256 indexed tokenId, address indexed seller, uint256 price);
    event Cancelled(address indexed collection, uint256 indexed tokenId);
    event Sold(address indexed collection, uint256 indexed tokenId, address indexed buyer);

    mapping(address => mapping(uint256 => Listing)) public listings;

    function list(address collection, uint256 tokenId, uint256 price) external {
        IERC721Transfer(collection).transferFrom(msg.sender, address(this), tokenId);
        listings[collection][tokenId] = Listing(msg.sender, price);
        emit Listed(collection, tokenId, msg.sender, price);
    }

    function cancel(address collection, uint256 tokenId) external {
        require(listings[collection][tokenId].seller == msg.sender, "not the seller");
        delete listings[collection][tokenId];
        IERC721Transfer(collection).transferFrom(address(this), msg.sender, tokenId);
        emit Cancelled(collection, tokenId);
    }

    function buy(address collection, uint256 tokenId) external payable {
        Listing memory listing = listings[collection][tokenId];
        require(listing.seller != address(0) && msg.value == listing.price, "not for sale at that price");
        delete listings[collection][tokenId];
        IERC721Transfer(collection).transferFrom(address(this), msg.sender, tokenId);
        (bool paid,) = payable(listing.seller).call{value: msg.value}("");
        require(paid, "payment failed");
        emit Sold(collection, tokenId, msg.sender);
    }
}
